package spec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveRootIsInsideTheSandbox(t *testing.T) {
	s, err := Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	got, err := ResolveRoot("../../testdata/spec", s)
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(repo)
	require.NoError(t, err)
	want, _ = filepath.Abs(want)
	assert.Equal(t, want, got)

	// The sandbox itself when the spec has no root.
	box := t.TempDir()
	noRoot := *s
	noRoot.Root = ""
	got, err = ResolveRoot(box, &noRoot)
	require.NoError(t, err)
	realBox, _ := filepath.EvalSymlinks(box)
	assert.Equal(t, realBox, got)

	// A root that leads out through a link is refused, naming the field.
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(box, "repo")))
	_, err = ResolveRoot(box, s)
	require.ErrorIs(t, err, ErrOutsideSandbox)
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"root"`)

	// A missing root, a missing sandbox.
	_, err = ResolveRoot(t.TempDir(), s)
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"repo"`)
	_, err = ResolveRoot(filepath.Join(box, "nope"), s)
	require.ErrorIs(t, err, ErrNoSandbox)
	// Parse refuses ".." and absolute roots; a hand-made Spec is checked too.
	bad := *s
	bad.Root = "../x"
	_, err = ResolveRoot(box, &bad)
	require.ErrorIs(t, err, ErrOutsideSandbox)
}

func TestCheckToolsRefusesUnknownAndAlwaysDenied(t *testing.T) {
	ex, err := fstools.New(t.TempDir())
	require.NoError(t, err)
	defer ex.Close()
	s, err := Parse([]byte(`{"system":"x","answer":{},"tools":["grep","read_files"]}`))
	require.NoError(t, err)
	err = CheckTools(s, ex)
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"read_files"`)
	assert.Contains(t, err.Error(), "read_file, ", "it lists what the run has")

	s, err = Load("../../testdata/spec/write-note.json")
	require.NoError(t, err)
	err = CheckTools(s, ex)
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), "always denies")

	tax := categories.Builtin()
	pol, err := selection.Parse(tax, "read_only,write_file")
	require.NoError(t, err)
	rw, err := fstools.New(t.TempDir(), executor.WithPolicy(pol), executor.WithTaxonomy(tax))
	require.NoError(t, err)
	defer rw.Close()
	assert.NoError(t, CheckTools(s, rw))

	tools, err := Declare(s, rw, nil)
	require.NoError(t, err)
	require.Len(t, tools, 1)
	assert.Equal(t, "write_file", tools[0].Function.Name)
	assert.Contains(t, tools[0].Function.Parameters.(map[string]any)["properties"], "content")
}

// historySpec greps, then lists src, then answers from the grep's result
// (two steps back): only a prompt that shows both results knows it.
func historySpec(t *testing.T, observations int) *Spec {
	t.Helper()
	s, err := Parse([]byte(fmt.Sprintf(`{
  "name": "history", "system": "Find the version; remember what the tools said.",
  "initial_state": null, "tools": ["grep", "list_dir"], "observations": %d, "observation_bytes": 200,
  "answer": {"type": "object", "required": ["state", "done"], "properties": {"state": {"type": ["string", "null"]}, "done": {"type": "boolean"}}},
  "script": [
    {"tool_intent": {"tool": "grep", "args": {"pattern": "Version = ", "paths": ["src"]}}},
    {"tool_intent": {"tool": "list_dir", "args": {"path": "src"}}},
    {"reply": {"state": "1.4.2", "done": true}, "requires_observation": "src/version.go:4: const Version = \"1.4.2\""}
  ]}`, observations)))
	require.NoError(t, err)
	return s
}

func TestObservationHistory(t *testing.T) {
	for _, c := range []struct {
		observations int
		right        bool
	}{{0, false}, {1, false}, {2, true}, {5, true}} {
		s := historySpec(t, c.observations)
		ex, err := fstools.New(repo)
		require.NoError(t, err)
		model := simFor(t, s, 3, 0.9)
		task := New(s)
		_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: model, Executor: ex}).Solve(context.Background(), task)
		require.NoError(t, err)
		ex.Close()
		assert.Equal(t, c.right, string(task.State()) == `"1.4.2"`, "observations %d: state %s", c.observations, task.State())
		if c.right {
			assert.Contains(t, model.prompts[2], "Earlier tool results, oldest first:\n[after step 0]\nTool \"grep\" returned:\nsrc/version.go:4:")
			assert.Contains(t, model.prompts[2], "Last tool result:\n")
		} else {
			assert.NotContains(t, model.prompts[2], "Earlier tool results")
		}
	}
}

func TestObservationHistoryIsCappedAndSurvivesASnapshot(t *testing.T) {
	s := historySpec(t, 3)
	task := New(s)
	long := strings.Repeat("é", 500) // 1000 bytes
	for i := range 4 {
		_, err := task.Apply(intent.Output{Intent: &intent.ToolIntent{Tool: "grep"}}, &intent.Observation{Tool: "grep", Status: intent.StatusOK, Content: fmt.Sprintf("result %d %s", i, long)})
		require.NoError(t, err)
	}
	require.Len(t, task.earlier(), 2, "observations 3: two earlier results and the last")
	for _, o := range task.earlier() {
		assert.LessOrEqual(t, len(o.Text), 200+len("\n[cut: 200 of 2000 bytes shown]"))
		assert.Contains(t, o.Text, "[cut: ")
		assert.True(t, utf8.ValidString(o.Text))
	}
	assert.Equal(t, []int{1, 2}, []int{task.earlier()[0].Step, task.earlier()[1].Step}, "the oldest dropped")
	snap, err := task.Snapshot()
	require.NoError(t, err)
	again := New(s)
	require.NoError(t, again.Restore(snap))
	assert.Equal(t, task.Prompt(nil), again.Prompt(nil))

	for _, bad := range []string{`"observations": -1`, `"observations": 33`, `"observation_bytes": -2`, `"observation_bytes": 70000`} {
		_, err := Parse([]byte(`{"system":"x","answer":{},` + bad + `}`))
		require.ErrorIs(t, err, ErrSpec, bad)
	}
}

// TestObservationLimitsAsDocumented: docs/tools.md says a spec's
// `observations: N` (1 to 32) shows the last N results, "each cut to
// `observation_bytes` (default 2048, at most 65536)". Both upper ends
// parse and one past them is refused; without observation_bytes an
// earlier result is cut at 2048 bytes, with the note.
func TestObservationLimitsAsDocumented(t *testing.T) {
	parse := func(fields string) error {
		_, err := Parse([]byte(`{"system":"x","answer":{},` + fields + `}`))
		return err
	}
	require.NoError(t, parse(`"observations": 32, "observation_bytes": 65536`))
	require.ErrorIs(t, parse(`"observations": 33`), ErrSpec)
	require.ErrorIs(t, parse(`"observation_bytes": 65537`), ErrSpec)

	s, err := Parse([]byte(`{"system":"x","answer":{},"tools":["grep"],"observations":2}`))
	require.NoError(t, err)
	task := New(s)
	for i := range 2 {
		_, err := task.Apply(intent.Output{Intent: &intent.ToolIntent{Tool: "grep"}}, &intent.Observation{Tool: "grep", Status: intent.StatusOK, Content: fmt.Sprintf("%d%s", i, strings.Repeat("x", 2999))})
		require.NoError(t, err)
	}
	require.Len(t, task.earlier(), 1)
	text := task.earlier()[0].Text
	// The result as the prompt shows it (its header and the content, 3022
	// bytes), cut to the default 2048.
	shown, note, ok := strings.Cut(text, "\n[cut: ")
	require.True(t, ok, "the cut is noted: %q", text[len(text)-60:])
	assert.Len(t, shown, 2048)
	assert.Equal(t, "2048 of 3022 bytes shown]", note)
}
