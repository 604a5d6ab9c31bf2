package declare

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestDeclareWithExecutorIntersectsAllowedTools(t *testing.T) {
	e := newExec(t, t.TempDir()) // read-only policy: write_file is withheld
	tools, err := Tools(e, []string{"grep", "write_file", "read_files", "read_file", "grep"}, declareDir, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"grep", "read_file"}, names(tools), "withheld (write_file) and unknown (read_files) names are not declared")

	rf := byName(t, tools, "read_file")
	assert.Equal(t, `Read a text file: lines from "offset", at most "limit".`, rf.Description, "the skill's description wins")
	params := rf.Parameters.(map[string]any)
	props := params["properties"].(map[string]any)
	// The executor's schema, not the file's: the file's read_file has no
	// maxLength on path, the built-in has.
	assert.Contains(t, props["path"], "maxLength", "the schema Execute validates against is the one declared")

	// Without a skill file, the tool's own description.
	tools, err = Tools(e, []string{"list_dir"}, declareDir, nil)
	require.NoError(t, err)
	assert.Contains(t, byName(t, tools, "list_dir").Description, "List a folder")

	// With the write allowed, write_file is declared.
	rw := newExec(t, t.TempDir(), executor.WithPolicy(rwPolicy()))
	tools, err = Tools(rw, []string{"write_file"}, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"write_file"}, names(tools))
}

func TestDeclareWithExecutorClosesOverHistory(t *testing.T) {
	e := newExec(t, t.TempDir())
	hist := []llms.MessageContent{{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
		llms.ToolCall{ID: "1", FunctionCall: &llms.FunctionCall{Name: "write_file", Arguments: "{}"}},
		llms.ToolCall{ID: "2", FunctionCall: &llms.FunctionCall{Name: "mystery", Arguments: "{}"}},
	}}}
	tools, err := Tools(e, []string{"read_file"}, nil, hist)
	require.NoError(t, err)
	assert.Equal(t, []string{"read_file", "write_file", "mystery"}, names(tools), "a tool the history names is declared, even withheld")
	assert.Contains(t, byName(t, tools, "write_file").Parameters.(map[string]any)["properties"], "content", "with the executor's schema")
	assert.Equal(t, map[string]any{"type": "object"}, byName(t, tools, "mystery").Parameters)
}

func TestDeclareWithExecutorStillRefusesBrokenFiles(t *testing.T) {
	e := newExec(t, t.TempDir())
	broken := fstest.MapFS{
		"tools/grep.json":    {Data: []byte(`{"type": "thing"}`)},
		"skills/glob.md":     {Data: []byte("---\ndescription: \"open\n---\n")},
		"skills/grep.md":     {Data: []byte("---\ndescription: fine\n---\n")},
		"tools/ok_tool.json": {Data: []byte(`{"type":"object"}`)},
	}
	_, err := Tools(e, []string{"grep"}, broken, nil)
	require.ErrorIs(t, err, executor.ErrInvalidSchema)
	assert.Contains(t, err.Error(), "tools/grep.json")
	_, err = Tools(e, []string{"glob"}, broken, nil)
	require.ErrorIs(t, err, ErrInvalidSkill)
	assert.Contains(t, err.Error(), "skills/glob.md")
}

func TestDescribeToolsIsCompactAndStable(t *testing.T) {
	e := newExec(t, t.TempDir())
	tools, err := Tools(e, []string{"read_file", "grep"}, nil, nil)
	require.NoError(t, err)
	text := executor.DescribeTools(tools)
	for _, want := range []string{
		"- read_file: Read a text file",
		"  path (string, required): file path relative to the root folder",
		"  limit (integer): most lines to return",
		"- grep: ",
		"  pattern (string, required)",
		"  paths (array of string)",
		`"tool_intent"`,
	} {
		assert.Contains(t, text, want)
	}
	assert.Less(t, strings.Index(text, "path (string, required)"), strings.Index(text, "limit (integer)"), "required arguments first")
	for range 20 {
		again, err := Tools(e, []string{"read_file", "grep"}, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, text, executor.DescribeTools(again), "the same tools give the same text")
	}
	// A raw schema describes as its decoded form does.
	raw := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "x", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":["string","null"],"enum":null}},"required":["a"]}`)}}}
	assert.Contains(t, executor.DescribeTools(raw), "a (string or null, required)")
	assert.Empty(t, executor.DescribeTools(nil))
	assert.Contains(t, executor.DescribeTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "y"}}}), "no arguments")
	long := strings.Repeat("word ", 200)
	d := executor.DescribeTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "z", Description: long}}})
	assert.Less(t, len(d), executor.MaxDescribedChars+300, "descriptions are capped")
}

func TestToolArgsAndSchema(t *testing.T) {
	e := newExec(t, t.TempDir())
	args, ok := e.ToolArgs("write_file")
	require.True(t, ok, "a withheld tool still has arguments to show")
	require.NotEmpty(t, args)
	assert.Equal(t, "content", args[0].Name)
	assert.True(t, args[0].Required)
	sch, ok := e.ToolSchema("read_file")
	require.True(t, ok)
	assert.True(t, json.Valid(sch))
	_, ok = e.ToolArgs("nope")
	assert.False(t, ok)
}

func TestTools(t *testing.T) {
	e := newExec(t, t.TempDir())
	tools := All(e, nil)
	assert.Equal(t, []string{"list_dir", "read_file", "glob", "grep", categories.IndexTool}, names(tools), "loaded tools, then the index tool")
	for _, tl := range tools {
		assert.NotEmpty(t, tl.Function.Description)
		params, ok := tl.Function.Parameters.(map[string]any)
		require.True(t, ok)
		assert.Equal(t, "object", params["type"])
	}
	// Callers may change what they get.
	tools[0].Function.Parameters.(map[string]any)["type"] = "changed"
	assert.Equal(t, "object", All(e, nil)[0].Function.Parameters.(map[string]any)["type"])

	hist := []llms.MessageContent{{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
		llms.ToolCall{ID: "1", FunctionCall: &llms.FunctionCall{Name: "write_file"}},
		llms.ToolCall{ID: "2", FunctionCall: &llms.FunctionCall{Name: "grep"}},
		llms.ToolCall{ID: "3", FunctionCall: &llms.FunctionCall{Name: "shell"}},
	}}}
	tools = All(e, hist)
	assert.Equal(t, []string{"list_dir", "read_file", "glob", "grep", categories.IndexTool, "write_file", "shell"}, names(tools))
	assert.Contains(t, tools[5].Function.Parameters.(map[string]any)["required"], "content", "a withheld tool the history calls keeps its schema")
	assert.Equal(t, map[string]any{"type": "object"}, tools[6].Function.Parameters)

	rw := newExec(t, t.TempDir(), executor.WithPolicy(rwPolicy()))
	assert.Contains(t, names(All(rw, nil)), "write_file")
}

// newExec returns an executor with the file tools over root.
func newExec(t *testing.T, root string, opts ...executor.Option) *executor.Executor {
	t.Helper()
	e, err := fstools.New(root, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	return e
}

func rwPolicy() categories.Policy {
	return categories.Policy{Categories: []categories.Category{categories.FileRead, categories.Search, categories.FileWrite}}
}
