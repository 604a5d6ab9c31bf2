package batch

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestDecompositionLinesAreCheckedWhenRead(t *testing.T) {
	jobs := readJobs(t, `{"id": "m", "multiply": {"a": "0123", "b": "45"}}
{"id": "s", "sort": {"list": [3, -1, 2]}}
{"id": "m2", "multiply": {"a": "12x", "b": "4"}}
{"id": "s2", "sort": {"list": [1.5]}}
{"id": "s3", "sort": {"list": [1]}, "multiply": {"a": "1", "b": "2"}}
{"id": "m3", "multiply": {"a": "1", "b": "2"}, "tools": "read_only"}
{"id": "m4", "multiply": {"a": "1", "b": "2", "c": "3"}}`)
	require.Len(t, jobs, 7)
	assert.NoError(t, jobs[0].Err)
	assert.Equal(t, "multiply", jobs[0].Kind())
	assert.NoError(t, jobs[1].Err)
	assert.Equal(t, "sort", jobs[1].Kind())
	for i, want := range map[int]string{2: `holds 'x'`, 3: "want a JSON list of integers", 4: "more than one task", 5: `"tools"`, 6: `unknown field "c"`} {
		require.ErrorIs(t, jobs[i].Err, ErrJob, "line %d", i+1)
		assert.Contains(t, jobs[i].Err.Error(), want, "line %d", i+1)
	}
}

// TestDecompositionJobsResumeToTheUninterruptedResults runs multiply and
// sort lines through a Runner with a Store, cancels the batch mid-run, runs
// it again, and compares the result lines with an uninterrupted batch's.
func TestDecompositionJobsResumeToTheUninterruptedResults(t *testing.T) {
	lines := `{"id": "m", "multiply": {"a": "8318479021", "b": "2080249439"}, "seed": 3}
{"id": "s", "sort": {"list": [9, 4, 7, 1, 8, 2, 6, 3, 5, 0, 11, 10]}}
{"id": "m2", "multiply": {"a": "99", "b": "7"}, "k": 2}`
	build := func() *Builtin {
		return &Builtin{
			Seed:         1,
			DecomposeSim: decompose.SimConfig{Latency: sim.FixedLatency(200 * time.Microsecond)},
			Model: func(Job, sim.Oracle, uint64) (llms.Model, error) {
				t.Error("a decomposition job asked for the step loop's model")
				return nil, nil
			},
		}
	}
	run := func(ctx context.Context, dir string) Summary {
		st, err := OpenStore(filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "state"))
		require.NoError(t, err)
		defer st.Close()
		r := &Runner{Build: build().Build, Store: st, Concurrency: 2}
		sum, _ := r.Run(ctx, readJobs(t, lines))
		return sum
	}
	want := run(context.Background(), t.TempDir())
	require.True(t, want.OK(), "%+v", want.Results)
	byID := func(s Summary) map[string]Result {
		out := map[string]Result{}
		for _, r := range s.Results {
			r.WallSeconds, r.Resumed, r.Journal = 0, 0, ""
			out[r.ID] = r
		}
		return out
	}
	w := byID(want)
	assert.JSONEq(t, `"17304511316768519219"`, string(w["m"].Answer))
	assert.JSONEq(t, `[0,1,2,3,4,5,6,7,8,9,10,11]`, string(w["s"].Answer))
	require.NotNil(t, w["m"].Correct)
	assert.True(t, *w["m"].Correct)
	assert.Equal(t, 2, w["m2"].K, `"k" fixes every role's k`)

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	first := run(ctx, dir)
	cancel()
	require.Less(t, len(first.Results), 3, "the batch was cut short")
	again := run(context.Background(), dir)
	require.True(t, again.OK())
	assert.Equal(t, w, byID(again), "the resumed batch's results are the uninterrupted batch's")
	resumed := 0
	for _, r := range again.Results {
		resumed += r.Resumed
	}
	assert.Positive(t, resumed, "decisions were read back from the journals")
	var got map[string]any
	require.NoError(t, json.Unmarshal(mustJSON(t, again.Results[0]), &got))
	assert.Contains(t, got, "answer")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
