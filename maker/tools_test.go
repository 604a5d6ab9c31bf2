package maker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolAtStep2 proposes a side-effect tool call at step 2 and counts
// otherwise.
func toolAtStep2(id SampleID, p string) (string, string) {
	if current(p) == 2 && !hasObservation(p) {
		return `{"tool_intent":{"tool":"deploy","args":{"target":"prod"}}}`, "stop"
	}
	return fmt.Sprintf(`{"next": %d}`, current(p)+1), "stop"
}

func hasObservation(p string) bool { return len(p) > len(fmt.Sprintf("value=%d", current(p))) }

func deployExecutor(t *testing.T, runs *atomic.Int64) *executor.Executor {
	return deployExecutorRecording(t, runs, nil)
}

// deployExecutorRecording also appends each deploy's target to targets.
func deployExecutorRecording(t *testing.T, runs *atomic.Int64, targets *[]string) *executor.Executor {
	t.Helper()
	tax := categories.Builtin()
	require.NoError(t, tax.Add("deploy", categories.Bash))
	deploy := executor.NewTool("deploy", categories.Bash, "deploys", json.RawMessage(`{"type":"object","properties":{"target":{"type":"string"}},"required":["target"],"additionalProperties":false}`),
		func(ctx context.Context, args map[string]any) (string, error) {
			runs.Add(1)
			if targets != nil {
				*targets = append(*targets, args["target"].(string))
			}
			return "deployed to " + args["target"].(string), nil
		})
	ex, err := executor.New(executor.WithTaxonomy(tax), executor.WithPolicy(categories.Policy{Allow: []string{"deploy"}}), executor.WithTools(deploy))
	require.NoError(t, err)
	return ex
}

func TestToolObservationReachesNextPrompt(t *testing.T) {
	var runs atomic.Int64
	task := &counter{target: 5}
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: toolAtStep2}, Executor: deployExecutor(t, &runs)}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.EqualValues(t, 1, runs.Load(), "only the winning call runs, once")
	assert.Equal(t, 1, rep.ToolCalls)
	require.Len(t, task.observed, 1)
	assert.Contains(t, task.observed[0], "deployed to prod")
	assert.Equal(t, 5, task.n)
	assert.Equal(t, 6, rep.Steps)
}

func TestNoExecutorDeniesTools(t *testing.T) {
	task := &counter{target: 4}
	rep, err := (&Solver{Model: &scripted{reply: toolAtStep2}}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Denied)
	assert.Contains(t, task.observed[0], "no tools")
}

func TestPendingSideEffectNeverRerunSilently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	var runs atomic.Int64
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: toolAtStep2}, Executor: deployExecutor(t, &runs), Journal: j}).Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	require.EqualValues(t, 1, runs.Load())

	// The crash: the process dies while the tool runs, after the pending
	// line is durable and before the step's record.
	b := mustRead(t, path)
	pending := bytes.Index(b, []byte(`{"step":2,"pending":true`))
	require.Positive(t, pending, "a side-effect call is journaled as pending before it runs")
	end := pending + bytes.IndexByte(b[pending:], '\n') + 1
	require.NoError(t, os.WriteFile(path, b[:end], 0o644))
	asCrashed(t, path)

	j, err = journalfile.Open(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: toolAtStep2}, Executor: deployExecutor(t, &runs), Journal: j}).Solve(context.Background(), &counter{target: 5})
	require.ErrorIs(t, err, ErrPendingSideEffect)
	assert.Contains(t, err.Error(), "deploy")
	require.NoError(t, j.Close())
	assert.EqualValues(t, 1, runs.Load(), "a pending side effect is never re-run silently")
	assert.Equal(t, b[:end], mustRead(t, path), "a refused resume leaves the journal as it was")

	j, err = journalfile.Open(path)
	require.NoError(t, err)
	task := &counter{target: 5}
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}, RerunPending: true}, Model: &scripted{reply: toolAtStep2}, Executor: deployExecutor(t, &runs), Journal: j}).Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.EqualValues(t, 2, runs.Load(), "re-run only when asked")
	assert.Equal(t, 5, task.n)
	assert.Equal(t, 2, rep.Resumed)
}

// grepAt0 proposes grep at step 0, spelling paths as a list on even
// samples and as a JSON string on odd ones, then counts.
func grepAt0(spell func(id SampleID) string) func(id SampleID, p string) (string, string) {
	return func(id SampleID, p string) (string, string) {
		if current(p) == 0 && !hasObservation(p) {
			return `{"tool_intent":{"tool":"grep","args":{"pattern":"Version","paths":` + spell(id) + `}}}`, "stop"
		}
		return fmt.Sprintf(`{"next": %d}`, current(p)+1), "stop"
	}
}

func TestHealedSpellingsVoteTogether(t *testing.T) {
	ex, err := fstools.New("../testdata/spec/repo")
	require.NoError(t, err)
	defer ex.Close()
	alternate := func(id SampleID) string {
		if id.Index%2 == 1 {
			return `"[\"src\"]"`
		}
		return `["src"]`
	}
	task := &counter{target: 2}
	var first *journal.StepRecord
	rep, err := (&Solver{
		Config:   Config{Vote: vote.Config{K: 2, Parallel: 1}},
		Model:    &scripted{reply: grepAt0(alternate)},
		Executor: ex,
		Progress: func(e Event) {
			if e.Step == 0 {
				c := *e.Record
				first = &c
			}
		},
	}).Solve(context.Background(), task)
	require.NoError(t, err)
	require.NotNil(t, first)
	assert.Equal(t, 2, first.Valid, "a list and the same list as a JSON string vote together: decided in two samples")
	assert.Len(t, first.Votes, 1)
	assert.Equal(t, []any{"src"}, first.Winner.Intent.Args["paths"], "the normalised intent is what runs")
	assert.Equal(t, 1, rep.ToolCalls)
	assert.Contains(t, task.observed[0], "src/version.go")
}

func TestUnhealableArgumentsAreRedFlagged(t *testing.T) {
	ex, err := fstools.New("../testdata/spec/repo")
	require.NoError(t, err)
	defer ex.Close()
	// Sample 1 of step 0 gives paths as a number: no healing makes it a
	// list of strings, so it is flagged before it can vote.
	spell := func(id SampleID) string {
		if id.Index == 1 {
			return `7`
		}
		return `["src"]`
	}
	var first *journal.StepRecord
	_, err = (&Solver{
		Config:   Config{Vote: vote.Config{K: 2, Parallel: 1}},
		Model:    &scripted{reply: grepAt0(spell)},
		Executor: ex,
		Progress: func(e Event) {
			if e.Step == 0 {
				c := *e.Record
				first = &c
			}
		},
	}).Solve(context.Background(), &counter{target: 2})
	require.NoError(t, err)
	assert.Equal(t, 1, first.Flags["invalid arguments"])
	assert.Equal(t, 2, first.Valid)
}
