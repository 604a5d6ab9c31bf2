package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/maker/families/sortlist"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sort2 is a new family as a user adds one: sort under another name.
type sort2 struct{ sortlist.Family }

func (sort2) Name() string { return "sort2" }

// TestARegisteredFamilyIsSolvedByTheTool: a family registered with
// problems.Register before the server is made is a property of
// solve_problem's input schema, described by its About, and solved and
// journaled by name as a built-in one.
func TestARegisteredFamilyIsSolvedByTheTool(t *testing.T) {
	t.Parallel()
	t.Cleanup(problems.Register(problems.Builtin{Family: sort2{}, Input: sortlist.Input{}, About: "a list sorted again", Example: `{"list": [INTEGERS]}`,
		Size:     problems.Size{Max: 10, Generate: sortlist.Generate},
		Headline: func(json.RawMessage) string { return "sort2" }}))
	c, _ := connect(t, mcpserver.Config{State: t.TempDir()})
	ctx := context.Background()
	tools, err := c.ListTools(ctx, nil)
	require.NoError(t, err)
	var props map[string]struct {
		Description string `json:"description"`
		Properties  map[string]any
	}
	for _, tool := range tools.Tools {
		if tool.Name == mcpserver.ToolSolveProblem {
			b, _ := json.Marshal(tool.InputSchema)
			var sch struct{ Properties json.RawMessage }
			require.NoError(t, json.Unmarshal(b, &sch))
			require.NoError(t, json.Unmarshal(sch.Properties, &props))
		}
	}
	require.Contains(t, props, "sort2", "the registered family is in the tool's schema")
	assert.Equal(t, "a list sorted again", props["sort2"].Description)
	assert.Contains(t, props["sort2"].Properties, "list")
	assert.Contains(t, props, "multiply")

	out := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem", map[string]any{"sort2": map[string]any{"list": []int{3, 1, 2}}}, nil))
	assert.True(t, out.Solved, out.Message)
	assert.Equal(t, []any{1.0, 2.0, 3.0}, out.Answer)
	assert.Regexp(t, `^sort2-[0-9a-f]{12}\.jsonl$`, out.Journal)
	toolError(t, call(t, ctx, c.ClientSession, "solve_problem", map[string]any{"sort2": map[string]any{"list": []int{1}}, "sort": map[string]any{"list": []int{1}}}, nil),
		`exactly one problem: multiply {"a": "DIGITS", "b": "DIGITS"}, sort {"list": [INTEGERS]}, sort2 {"list": [INTEGERS]} or problem`)
}

// TestDefaultJournalNamesAreKept: the default journal's name of a
// built-in family's problem is the one versions with a field per family
// gave, so that a resume after an upgrade finds its journal.
func TestDefaultJournalNamesAreKept(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{State: t.TempDir()})
	ctx := context.Background()
	for args, want := range map[string]string{
		`{"multiply": {"a": "123", "b": "45"}}`: "multiply-ac702a9552e7.jsonl",
		`{"sort": {"list": [3, 1, 2]}}`:         "sort-59ddd2a95b49.jsonl",
	} {
		var a map[string]any
		require.NoError(t, json.Unmarshal([]byte(args), &a))
		out := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem", a, nil))
		assert.Equal(t, want, out.Journal, args)
	}
}
