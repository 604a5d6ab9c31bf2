package batch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/sortlist"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// problemDir is a tasks folder holding the problems package's two test
// specs: sort-spec.json (with the sort family's truth and checker) and
// sum-spec.json (a general one, for real models only).
func problemDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"sort-spec.json", "sum-spec.json"} {
		b, err := os.ReadFile(filepath.Join("..", "problems", "testdata", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	return dir
}

func TestProblemLinesAreCheckedWhenRead(t *testing.T) {
	dir := problemDir(t)
	jobs, err := ReadJobs(strings.NewReader(`{"id": "p", "problem": {"spec": "sort-spec.json", "input": {"list": [3, 1, 2]}}}
{"id": "p2", "problem": {"spec": "nowhere.json", "input": {"list": [1]}}}
{"id": "p3", "problem": {"spec": "sort-spec.json", "input": {"list": ["a"]}}}
{"id": "p4", "problem": {"spec": "sort-spec.json"}}
{"id": "p5", "problem": {"input": {"list": [1]}}}
{"id": "p6", "problem": {"spec": "sort-spec.json", "input": {"list": [1]}}, "sort": {"list": [1]}}
{"id": "p7", "problem": {"spec": "sort-spec.json", "input": {"list": [1]}}, "max_steps": 3}`), dir)
	require.NoError(t, err)
	require.Len(t, jobs, 7)
	require.NoError(t, jobs[0].Err)
	assert.Equal(t, "problem", jobs[0].Kind())
	for i, want := range map[int]string{1: "nowhere.json", 2: "schema", 3: `needs "input"`, 4: `needs "spec"`, 5: "more than one task", 6: `"max_steps"`} {
		require.ErrorIs(t, jobs[i].Err, ErrJob, "line %d", i+1)
		assert.Contains(t, jobs[i].Err.Error(), want, "line %d", i+1)
	}
}

// A problem line runs on the simulated model when its spec names a
// family, and is invalid (saying why) when it names none.
func TestProblemLinesRun(t *testing.T) {
	dir := problemDir(t)
	jobs, err := ReadJobs(strings.NewReader(`{"id": "p", "problem": {"spec": "sort-spec.json", "input": {"list": [9, 4, 7, 1, 8, 2, 6, 3]}}, "seed": 2}
{"id": "q", "problem": {"spec": "sum-spec.json", "input": {"n": [1, 2, 3]}}}`), dir)
	require.NoError(t, err)
	b := &Builtin{Seed: 1, Model: func(Job, sim.Oracle, uint64) (llms.Model, error) {
		t.Error("a decomposition job asked for the step loop's model")
		return nil, nil
	}}
	r := &Runner{Build: b.Build, Concurrency: 2}
	sum, _ := r.Run(context.Background(), jobs)
	got := map[string]Result{}
	for _, res := range sum.Results {
		got[res.ID] = res
	}
	p := got["p"]
	assert.Equal(t, StatusSolved, p.Status, p.Error)
	assert.JSONEq(t, `[1,2,3,4,6,7,8,9]`, string(p.Answer))
	require.NotNil(t, p.Correct)
	assert.True(t, *p.Correct)
	assert.Positive(t, p.Samples)
	q := got["q"]
	assert.Equal(t, StatusInvalid, q.Status)
	assert.Contains(t, q.Error, "names no \"family\"")
}

// A spec without a checker or family: the answer is given, not checked,
// and the line is solved (the result carries no "correct").
func TestProblemLineWithoutACheckerIsAnswered(t *testing.T) {
	dir := problemDir(t)
	b, err := os.ReadFile(filepath.Join(dir, "sort-spec.json"))
	require.NoError(t, err)
	general := strings.Replace(strings.Replace(string(b), `"family": "sort",`, "", 1), `"checker"`, `"x-no-checker"`, 1)
	general = strings.Replace(general, `"x-no-checker": {"type": "object", "properties": {"answer": {"type": "array"}}, "required": ["input", "answer"]}`, `"max_depth": 4`, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "general.json"), []byte(general), 0o600))
	s, err := problems.LoadSpec(filepath.Join(dir, "general.json"))
	require.NoError(t, err)
	require.Nil(t, s.Builtin())
	jobs, err := ReadJobs(strings.NewReader(`{"id": "g", "problem": {"spec": "general.json", "input": {"list": [5, 3, 9, 1]}}}`), dir)
	require.NoError(t, err)
	require.NoError(t, jobs[0].Err)
	bt := &Builtin{Seed: 1, Model: func(Job, sim.Oracle, uint64) (llms.Model, error) { return nil, nil }, RoleModels: func(Job) (map[decompose.Role]llms.Model, error) {
		// Real models in effect: the sim playing the sort family's truth.
		sims, err := decompose.NewSim(s.AsFamily(), sortlist.Family{}, decompose.SimConfig{Seed: 1, Roles: problems.SimRoles(decompose.SimRole{P: 0.95, Rivals: 2})})
		return sims.Models(), err
	}}
	sum, _ := (&Runner{Build: bt.Build}).Run(context.Background(), jobs)
	require.Len(t, sum.Results, 1)
	g := sum.Results[0]
	assert.Equal(t, StatusSolved, g.Status, g.Error)
	assert.JSONEq(t, `[1,3,5,9]`, string(g.Answer))
	assert.Nil(t, g.Correct, "not checked")
}
