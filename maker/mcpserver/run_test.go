package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunTaskFindsTheVersionThroughRealTools(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	state := t.TempDir()
	cfg := mcpserver.Config{Root: root, State: state}
	cfg.Sim.P, cfg.Sim.Seed, cfg.Sim.WrongAnswers = 0.8, 3, 3
	c, _ := connect(t, cfg)
	res := call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec_path": "find-version.json"}, "run")
	out := decode[mcpserver.RunTaskOutput](t, res)
	assert.True(t, out.Done, out.Message)
	assert.Equal(t, 3, out.Steps)
	assert.Equal(t, 2, out.ToolCalls)
	assert.Zero(t, out.Denied)
	assert.Equal(t, map[string]any{"version": "1.4.2", "file": "src/version.go"}, out.FinalState)
	assert.Contains(t, out.Message, "done: 3 steps")
	// One progress notification per step (a notification may be handled
	// just after the result), and the journal in --state.
	require.Eventually(t, func() bool { return len(c.notes("run")) == 3 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, "step 2 decided", c.notes("run")[2].Message)
	assert.FileExists(t, filepath.Join(state, out.Journal))
	assert.Regexp(t, `^find-version-[0-9a-f]{16}\.jsonl$`, out.Journal)

	// The same spec again is refused: its journal exists.
	toolError(t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec_path": "find-version.json"}, nil),
		"already exists", "resume: true")
	// Resumed, the finished run replays its journal and is done at once.
	again := decode[mcpserver.RunTaskOutput](t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec_path": "find-version.json", "resume": true}, nil))
	assert.True(t, again.Done)
	assert.Equal(t, 3, again.Resumed)
	assert.Equal(t, out.Samples, again.Samples, "a resumed run reports the same totals")
}

func TestRunTaskToolPolicyIsReadOnlyByDefault(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	spec, err := os.ReadFile("../../testdata/spec/write-denied.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "write.json"), spec, 0o644))
	c, _ := connect(t, mcpserver.Config{Root: root, State: t.TempDir()})
	out := decode[mcpserver.RunTaskOutput](t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec_path": "write.json"}, nil))
	assert.Equal(t, 1, out.Denied)
	assert.NoFileExists(t, filepath.Join(root, "note.txt"), "nothing is written under the read-only policy")

	// With file_write allowed by the operator, the same task writes.
	pol, err := selection.Parse(categories.Builtin(), "read_only,file_write")
	require.NoError(t, err)
	c, _ = connect(t, mcpserver.Config{Root: root, State: t.TempDir(), Policy: &pol})
	note, err := os.ReadFile("../../testdata/spec/write-note.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "note.json"), note, 0o644))
	out = decode[mcpserver.RunTaskOutput](t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec_path": "note.json"}, nil))
	assert.Zero(t, out.Denied)
	assert.Equal(t, map[string]any{"wrote": true}, out.FinalState)
	assert.FileExists(t, filepath.Join(root, "note.txt"))

	// Under the read-only policy, a spec that needs the write is refused
	// before any call.
	c, _ = connect(t, mcpserver.Config{Root: root, State: t.TempDir()})
	toolError(t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec_path": "note.json"}, nil),
		`"write_file"`, "always denies")
}

func TestRunTaskRootIsInsideTheServersRoot(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
	state := t.TempDir()
	c, _ := connect(t, mcpserver.Config{Root: root, State: state})
	spec := map[string]any{"system": "x", "answer": map[string]any{"type": "object"}, "root": "out", "script": []any{map[string]any{"done": true}}}
	toolError(t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": spec}, nil), `"root"`, "outside")
	spec["root"], spec["tools"] = "repo", []string{"grep", "read_files"}
	toolError(t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": spec}, nil), `"read_files"`)
	entries, err := os.ReadDir(state)
	require.NoError(t, err)
	assert.Empty(t, entries, "refused before any journal")
}

func TestRunTaskCancelledThenResumed(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	cfg := mcpserver.Config{Root: t.TempDir(), State: state}
	cfg.Sim = sim.DefaultConfig()
	cfg.Sim.Latency = sim.FixedLatency(3 * time.Millisecond)
	c, _ := connect(t, cfg)
	args := map[string]any{"spec": counterSpec(40), "journal": "count.jsonl"}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "run_task", Arguments: args}
		p.SetProgressToken("count")
		_, err := c.CallTool(ctx, p)
		done <- err
	}()
	require.Eventually(t, func() bool { return len(c.notes("count")) >= 5 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	// A new run on the same journal is refused; a resume finishes the run.
	toolError(t, call(t, context.Background(), c.ClientSession, "run_task", args, nil), "count.jsonl already exists")
	args["resume"] = true
	out := decode[mcpserver.RunTaskOutput](t, call(t, context.Background(), c.ClientSession, "run_task", args, nil))
	assert.True(t, out.Done, out.Message)
	assert.Equal(t, 40, out.Steps)
	assert.GreaterOrEqual(t, out.Resumed, 5, "the steps decided before the cancel were replayed")
	assert.Less(t, out.Resumed, 40, "the cancel stopped the first run")
	assert.EqualValues(t, 40, out.FinalState)

	// Resuming with other settings is refused by the journal.
	args["k"] = 5
	toolError(t, call(t, context.Background(), c.ClientSession, "run_task", args, nil), "journal count.jsonl", "k: 3 in the journal, 5 now")
}

func TestRunTaskFailedRunIsAToolErrorWithItsSummary(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{Root: t.TempDir(), State: t.TempDir()}
	cfg.Sim.P, cfg.Sim.WrongAnswers, cfg.Sim.Seed = 0.5, 1, 2
	c, _ := connect(t, cfg)
	res := call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": counterSpec(5), "k": 6, "max_samples": 6}, nil)
	toolError(t, res, "the run failed after", "undecided", "resume: true")
	out := structured[mcpserver.RunTaskOutput](t, res)
	assert.False(t, out.Done)
	assert.Positive(t, out.Samples, "the summary comes with the error")
}

func TestRunTaskBadArgumentsKeepTheServerServing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.json"), []byte(`{"system":"x","answer":{}}`), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(root, "link.json")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "noscript.json"), []byte(`{"system":"x","answer":{"type":"object"}}`), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir.json"), 0o755))
	c, _ := connect(t, mcpserver.Config{Root: root, State: t.TempDir()})
	ctx := context.Background()
	for _, tc := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"spec_path": 12}, []string{"spec_path"}},                              // schema violation
		{map[string]any{"spec_path": "x.json", "k": "three"}, []string{"k"}},                  // schema violation
		{map[string]any{"spec_path": "x.json", "speed": 1}, []string{"speed"}},                // unknown argument
		{map[string]any{}, []string{"give the task"}},                                         // neither
		{map[string]any{"spec_path": "a.json", "spec": counterSpec(2)}, []string{"not both"}}, // both
		{map[string]any{"spec_path": "missing.json"}, []string{"no such file under the server's root"}},
		{map[string]any{"spec_path": "../secret.json"}, []string{"path outside the root", `without ".." parts`}},
		{map[string]any{"spec_path": filepath.Join(outside, "secret.json")}, []string{"path outside the root"}},
		{map[string]any{"spec_path": "link.json"}, []string{"path outside the root", "symbolic link"}},
		{map[string]any{"spec_path": "dir.json"}, []string{"not a regular file"}},
		{map[string]any{"spec_path": "noscript.json"}, []string{"the simulated model (sim) answers a spec task from the spec's script"}},
		{map[string]any{"spec": map[string]any{"system": "x"}}, []string{"bad task spec", `"answer" is missing`}},
		{map[string]any{"spec": counterSpec(2), "journal": "../escape.jsonl"}, []string{"journal \"../escape.jsonl\": give a plain file name"}},
		{map[string]any{"spec": counterSpec(2), "journal": "gone.jsonl", "resume": true}, []string{"file does not exist", "no run to resume"}},
		{map[string]any{"spec": counterSpec(2), "rerun_pending": true}, []string{"rerun_pending applies to resume only"}},
		{map[string]any{"spec": counterSpec(2), "models": []string{"anthropic:claude"}}, []string{"model not allowed"}},
	} {
		toolError(t, call(t, ctx, c.ClientSession, "run_task", tc.args, nil), tc.want...)
	}
	assert.NoFileExists(t, filepath.Join(filepath.Dir(root), "escape.jsonl"))
	out := decode[mcpserver.RunTaskOutput](t, call(t, ctx, c.ClientSession, "run_task", map[string]any{"spec": counterSpec(2)}, nil))
	assert.True(t, out.Done, "the server still serves")
}

func TestRunTaskNeedsAStateFolder(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{Root: t.TempDir()})
	toolError(t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": counterSpec(2)}, nil), "no state folder", "--state")
}

func TestConfigRefusesAnUnknownToolDeclaration(t *testing.T) {
	t.Parallel()
	_, err := mcpserver.New(mcpserver.Config{Root: t.TempDir(), ToolDeclaration: "telepathy"})
	require.ErrorIs(t, err, mcpserver.ErrConfig)
	assert.Contains(t, err.Error(), "telepathy")
}

// TestStateFolderMustBePrivate: a State folder others may write in is
// refused (they could change a run's journal), naming it and the fix.
func TestStateFolderMustBePrivate(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	require.NoError(t, os.Chmod(state, 0o777))
	_, err := mcpserver.New(mcpserver.Config{Root: t.TempDir(), State: state})
	require.ErrorIs(t, err, mcpserver.ErrConfig)
	require.ErrorIs(t, err, safefile.ErrNotPrivate)
	assert.Contains(t, err.Error(), state)
	assert.Contains(t, err.Error(), "chmod go-w")
}

// TestStateFolderIsMadeAtTheFirstRunTask: a server that never runs a task
// leaves no folder behind (`maker mcp` used to make one under the home
// folder at every start); the first run_task makes it, private.
func TestStateFolderIsMadeAtTheFirstRunTask(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state", "journals")
	c, _ := connect(t, mcpserver.Config{Root: t.TempDir(), State: state})
	assert.NoDirExists(t, filepath.Dir(state), "New makes nothing")
	out := decode[mcpserver.RunTaskOutput](t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": counterSpec(2)}, nil))
	assert.True(t, out.Done)
	fi, err := os.Stat(state)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}
