package batch

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/maker/families/sortlist"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// sort2 is a new family as a user adds one: sort under another name.
type sort2 struct{ sortlist.Family }

func (sort2) Name() string { return "sort2" }

// TestARegisteredFamilyIsATaskLine: a family registered with
// problems.Register is a task line's key: read, checked, listed in the
// messages and solved by the Builtin, as "sort" is.
func TestARegisteredFamilyIsATaskLine(t *testing.T) {
	t.Cleanup(problems.Register(problems.Builtin{Family: sort2{}, Input: sortlist.Input{}, Example: `{"list": [N]}`,
		Size:     problems.Size{Max: 10, Generate: sortlist.Generate},
		Headline: func(json.RawMessage) string { return "sort2" }}))
	jobs := readJobs(t, `{"id": "a", "sort2": {"list": [3, -1, 2]}, "seed": 2}
{"id": "b", "sort2": {"list": ["x"]}}
{"id": "c", "sort2": {"list": [1]}, "sort": {"list": [1]}}
{"id": "d", "colour": 1}
{"id": "e"}`)
	require.Len(t, jobs, 5)
	require.NoError(t, jobs[0].Err)
	assert.Equal(t, "sort2", jobs[0].Kind())
	assert.JSONEq(t, `{"list": [3, -1, 2]}`, string(jobs[0].FamilyInput))
	assert.Equal(t, uint64(2), *jobs[0].Seed, "the line's other keys are read as fields")
	for i, want := range map[int]string{1: `"sort2": invalid list`, 2: `exactly one of "spec", "hanoi", "multiply", "sort", "sort2", "problem" and "task"`,
		3: "the fields are id, spec, input, hanoi, multiply, sort, sort2, problem, task", 4: `"sort": {"list": [INTEGERS]}, "sort2": {"list": [N]} or "problem"`} {
		require.ErrorIs(t, jobs[i].Err, ErrJob, "line %d", i+1)
		assert.Contains(t, jobs[i].Err.Error(), want, "line %d", i+1)
	}

	b := &Builtin{Model: func(Job, sim.Oracle, uint64) (llms.Model, error) {
		t.Error("a decomposition job asked for the step loop's model")
		return nil, nil
	}}
	sum, err := (&Runner{Build: b.Build}).Run(context.Background(), jobs[:1])
	require.NoError(t, err)
	require.Len(t, sum.Results, 1)
	r := sum.Results[0]
	assert.Equal(t, StatusSolved, r.Status, r.Error)
	assert.Equal(t, "sort2", r.Kind)
	assert.JSONEq(t, `[-1, 2, 3]`, string(r.Answer))
}
