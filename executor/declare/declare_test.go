package declare

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/mdap-go/mdap/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

var (
	declareDir     = os.DirFS("../../testdata/executor/declare")
	brokenSchemaFS = os.DirFS("../../testdata/executor/broken_schema")
	brokenSkillFS  = os.DirFS("../../testdata/executor/broken_frontmatter")
)

func names(tools []llms.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Function.Name)
	}
	return out
}

func byName(t *testing.T, tools []llms.Tool, name string) *llms.FunctionDefinition {
	t.Helper()
	for _, tl := range tools {
		if tl.Function.Name == name {
			return tl.Function
		}
	}
	require.Failf(t, "tool not declared", "tool %q", name)
	return nil
}

func fileJSON(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func TestDeclareKeepsOrderAndReadsDescriptions(t *testing.T) {
	tools, err := Tools(nil, []string{"summarise", "read_file", "grep", "quoting", "no_skill", "no_front_matter"}, declareDir, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"summarise", "read_file", "grep", "quoting", "no_skill", "no_front_matter"}, names(tools))
	for _, tl := range tools {
		assert.Equal(t, "function", tl.Type)
	}
	assert.Equal(t, `Read a text file: lines from "offset", at most "limit".`, byName(t, tools, "read_file").Description)
	assert.Equal(t, "Search files for lines matching a regular expression", byName(t, tools, "grep").Description)
	assert.Equal(t, "Summarise a text in a few words.\nNever invents facts.", byName(t, tools, "summarise").Description)
	assert.Equal(t, `It's single-quoted: "keep these"`, byName(t, tools, "quoting").Description)
	assert.Empty(t, byName(t, tools, "no_skill").Description, "no skill file: no description")
	assert.Empty(t, byName(t, tools, "no_front_matter").Description, "a body line is not front matter")

	// The schema is sent as the file has it.
	assert.Equal(t, fileJSON(t, "../../testdata/executor/declare/tools/read_file.json"), byName(t, tools, "read_file").Parameters)
	assert.Equal(t, fileJSON(t, "../../testdata/executor/declare/tools/summarise.json"), byName(t, tools, "summarise").Parameters)
}

func TestDeclareParametersMarshalAsTheSchema(t *testing.T) {
	tools, err := Tools(nil, []string{"grep"}, declareDir, nil)
	require.NoError(t, err)
	// Providers marshal the FunctionDefinition: parameters must come out as
	// the schema object itself.
	b, err := json.Marshal(tools[0])
	require.NoError(t, err)
	var got struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, "grep", got.Function.Name)
	assert.Equal(t, fileJSON(t, "../../testdata/executor/declare/tools/grep.json"), got.Function.Parameters)
	_, isMap := tools[0].Function.Parameters.(map[string]any)
	assert.True(t, isMap, "a map suits every langchaingo provider, Google AI included")
}

func TestDeclareDropsNamesWithoutSchemaAndDuplicates(t *testing.T) {
	tools, err := Tools(nil, []string{"ghost", "read_file", "nothing_at_all", "read_file"}, declareDir, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"read_file"}, names(tools))

	tools, err = Tools(nil, []string{"read_file"}, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, tools, "a nil dir has no schemas")
}

func history() []llms.MessageContent {
	call := func(name string) llms.ToolCall {
		return llms.ToolCall{ID: "id-" + name, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: "{}"}}
	}
	return []llms.MessageContent{
		{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextPart("go")}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call("grep"), call("read_file")}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "id-grep", Name: "grep", Content: "x"}}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call("mystery"), call("grep")}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "id-q", Name: "quoting", Content: "x"}}},
	}
}

func TestDeclareAddsToolsTheHistoryCalls(t *testing.T) {
	assert.Equal(t, []string{"grep", "read_file", "mystery", "quoting"}, historyTools(history()))

	tools, err := Tools(nil, []string{"read_file", "ghost"}, declareDir, history())
	require.NoError(t, err)
	assert.Equal(t, []string{"read_file", "grep", "mystery", "quoting"}, names(tools),
		"declared first, then history tools once each in order of first appearance")
	assert.Equal(t, fileJSON(t, "../../testdata/executor/declare/tools/grep.json"), byName(t, tools, "grep").Parameters, "its schema when there is one")
	assert.Equal(t, "Search files for lines matching a regular expression", byName(t, tools, "grep").Description)
	assert.Equal(t, map[string]any{"type": "object"}, byName(t, tools, "mystery").Parameters, "else an open object")
	assert.Empty(t, byName(t, tools, "mystery").Description)

	tools, err = Tools(nil, nil, nil, history())
	require.NoError(t, err)
	assert.Equal(t, []string{"grep", "read_file", "mystery", "quoting"}, names(tools))
	for _, tl := range tools {
		assert.Equal(t, map[string]any{"type": "object"}, tl.Function.Parameters)
	}

	odd := []llms.MessageContent{{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
		llms.ToolCall{ID: "1", FunctionCall: &llms.FunctionCall{Name: "../../etc/passwd"}}}}}
	tools, err = Tools(nil, nil, declareDir, odd)
	require.NoError(t, err, "a history name that cannot be a file name reads no file")
	assert.Equal(t, []string{"../../etc/passwd"}, names(tools))
}

func TestDeclareBrokenSchemaIsAnErrorNamingTheFile(t *testing.T) {
	for _, name := range []string{"not_json", "not_a_schema", "not_an_object"} {
		t.Run(name, func(t *testing.T) {
			_, err := Tools(nil, []string{name}, brokenSchemaFS, nil)
			require.ErrorIs(t, err, executor.ErrInvalidSchema)
			assert.Contains(t, err.Error(), "tools/"+name+".json")
		})
	}
	hist := []llms.MessageContent{{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
		llms.ToolCall{ID: "1", FunctionCall: &llms.FunctionCall{Name: "not_json"}}}}}
	_, err := Tools(nil, nil, brokenSchemaFS, hist)
	require.ErrorIs(t, err, executor.ErrInvalidSchema, "a history tool's broken schema is an error too")
}

func TestDeclareBrokenFrontMatterIsAnErrorNamingTheFile(t *testing.T) {
	for name, words := range map[string]string{
		"unclosed":      "never closed",
		"bad_line":      "line 3",
		"bad_quote":     "not closed",
		"duplicate_key": "appears twice",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Tools(nil, []string{name}, brokenSkillFS, nil)
			require.ErrorIs(t, err, ErrInvalidSkill)
			assert.Contains(t, err.Error(), "skills/"+name+".md")
			assert.Contains(t, err.Error(), words)
		})
	}
}

func TestDeclareRefusesNamesThatAreNotFileNames(t *testing.T) {
	for _, name := range []string{"", ".", "..", "../tools/read_file", "a/b", "a\\b", "x\x00"} {
		_, err := Tools(nil, []string{name}, declareDir, nil)
		assert.ErrorIs(t, err, executor.ErrInvalidTool, "%q", name)
	}
}
