package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestJobInputSetsTheSpecsInitialState: a spec job's "input" is merged
// into the spec's initial state, so one spec serves many tasks; each
// task's fingerprint covers its input. An input on a hanoi task, or one
// that is not an object, makes the line invalid, naming it.
func TestJobInputSetsTheSpecsInitialState(t *testing.T) {
	b := &Builtin{Model: func(_ Job, o sim.Oracle, _ uint64) (llms.Model, error) { return sim.New(o, sim.DefaultConfig()) }}
	spec := specPath(t, "find-version.json")
	jobs, err := ReadJobs(stringsReader(fmt.Sprintf(`{"id": "a", "spec": %q, "input": {"file": "a.go"}}
{"id": "b", "spec": %q, "input": {"file": "b.go"}}
{"id": "h", "hanoi": {"disks": 2}, "input": {"x": 1}}
{"id": "l", "spec": %q, "input": [1]}`, spec, spec, spec)), t.TempDir())
	require.NoError(t, err)
	require.Len(t, jobs, 4)
	var fps []string
	for _, j := range jobs[:2] {
		require.NoError(t, j.Err)
		u, err := b.Build(context.Background(), j)
		require.NoError(t, err)
		st := u.Task.(interface{ State() json.RawMessage })
		assert.Contains(t, string(st.State()), fmt.Sprintf(`"file":"%s.go"`, j.ID))
		fps = append(fps, u.Task.Fingerprint())
		require.NoError(t, u.Close())
	}
	assert.NotEqual(t, fps[0], fps[1])
	require.ErrorIs(t, jobs[2].Err, ErrJob)
	assert.Contains(t, jobs[2].Err.Error(), `"input" is for a "spec" task`)
	require.ErrorIs(t, jobs[3].Err, ErrJob)
	assert.Contains(t, jobs[3].Err.Error(), `"input" is [1]: give a JSON object`)
}
