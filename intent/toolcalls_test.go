package intent_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"

	"github.com/mdap-go/mdap/intent"
)

func call(name, args string) llms.ToolCall {
	return llms.ToolCall{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

func TestFromToolCalls(t *testing.T) {
	o, err := intent.FromToolCalls([]llms.ToolCall{call("read_file", `{"path":"a.txt","limit":10}`)})
	require.NoError(t, err)
	assert.Nil(t, o.Value)
	require.NotNil(t, o.Intent)
	assert.Equal(t, "read_file", o.Intent.Tool)
	assert.Equal(t, map[string]any{"path": "a.txt", "limit": json.Number("10")}, o.Intent.Args)
	assert.Empty(t, o.Intent.Rationale)
}

// TestFromToolCallsSameAsText: a native call and the same call written as
// JSON text, in every accepted spelling, give the same Output and key.
func TestFromToolCallsSameAsText(t *testing.T) {
	native, err := intent.FromToolCalls([]llms.ToolCall{call("read_file", `{"path": "a.txt", "limit": 10}`)})
	require.NoError(t, err)
	want := mustKey(t, native)
	for _, text := range []string{
		`{"tool_intent":{"tool":"read_file","args":{"path":"a.txt","limit":10}}}`,
		`{"tool_intent":{"name":"read_file","arguments":"{\"path\": \"a.txt\", \"limit\": 10}"}}`,
		`{"tool_name":"read_file","arguments":{"limit":1.0e1,"path":"a.txt"}}`,
		"```json\n{\"tool\":\"read_file\",\"args\":\"{\\\"path\\\":\\\"a.txt\\\",\\\"limit\\\":10}\"}\n```",
		`Calling {"tool_intent":{"tool":"read_file","args":{"path":"a.txt","limit":10},"rationale":"why not"}}.`,
	} {
		o, err := intent.Parse(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, mustKey(t, o), text)
		assert.Equal(t, native.Intent.Args, o.Intent.Args, text)
	}
}

func TestFromToolCallsNoArguments(t *testing.T) {
	want := mustKey(t, mustParse(t, `{"tool_intent":{"tool":"list_dir"}}`))
	for _, args := range []string{"", "  ", "{}", "null", " { } "} {
		o, err := intent.FromToolCalls([]llms.ToolCall{call("list_dir", args)})
		require.NoError(t, err, "%q", args)
		assert.NotNil(t, o.Intent.Args, "%q", args)
		assert.Empty(t, o.Intent.Args, "%q", args)
		assert.Equal(t, want, mustKey(t, o), "%q", args)
	}
}

func TestFromToolCallsTypeAndID(t *testing.T) {
	a := call("x", `{"a":1}`)
	b := a
	b.ID, b.Type = "toolu_other", "" // Anthropic's calls have no type
	ka := mustKey(t, mustCalls(t, a))
	assert.Equal(t, ka, mustKey(t, mustCalls(t, b)))
}

func TestFromToolCallsErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls []llms.ToolCall
		err   error
		msg   string
	}{
		{"none", nil, intent.ErrNoAnswer, "no tool call"},
		{"empty", []llms.ToolCall{}, intent.ErrNoAnswer, "no tool call"},
		{"two", []llms.ToolCall{call("a", "{}"), call("b", "{}")}, intent.ErrAmbiguous, `2 tool calls ("a", "b")`},
		{"two identical", []llms.ToolCall{call("a", "{}"), call("a", "{}")}, intent.ErrAmbiguous, "want one"},
		{"no function", []llms.ToolCall{{ID: "c", Type: "function"}}, intent.ErrInvalidIntent, "no function"},
		{"other type", []llms.ToolCall{{ID: "c", Type: "code_interpreter", FunctionCall: &llms.FunctionCall{Name: "x"}}}, intent.ErrInvalidIntent, `type "code_interpreter"`},
		{"empty name", []llms.ToolCall{call("", "{}")}, intent.ErrInvalidIntent, "empty function name"},
		{"bad utf8 name", []llms.ToolCall{call("x\xff", "{}")}, intent.ErrInvalidIntent, "UTF-8"},
		{"args not json", []llms.ToolCall{call("x", "path=a")}, intent.ErrInvalidIntent, "does not decode"},
		{"args array", []llms.ToolCall{call("x", "[1,2]")}, intent.ErrInvalidIntent, "string holding an array"},
		{"args number", []llms.ToolCall{call("x", "7")}, intent.ErrInvalidIntent, "string holding a number"},
		{"args trailing", []llms.ToolCall{call("x", `{"a":1} {"a":2}`)}, intent.ErrInvalidIntent, "after the JSON value"},
		{"args duplicate key", []llms.ToolCall{call("x", `{"a":1,"a":2}`)}, intent.ErrInvalidIntent, "duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := intent.FromToolCalls(tc.calls)
			require.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.msg)
			assert.Equal(t, intent.Output{}, o)
		})
	}
}

// TestLangchaingoToolCallJSONLosesFunction pins a langchaingo v0.1.14 bug that
// callers must know about: ToolCall's JSON round trip drops the function.
// Persist tool calls in your own shape (or as the Output/canonical form),
// never through llms.ToolCall's MarshalJSON/UnmarshalJSON. If this test
// fails, langchaingo has fixed it.
func TestLangchaingoToolCallJSONLosesFunction(t *testing.T) {
	in := []llms.ToolCall{call("read_file", `{"path":"a"}`)}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	var out []llms.ToolCall
	require.NoError(t, json.Unmarshal(b, &out))
	require.Len(t, out, 1)
	require.NotNil(t, out[0].FunctionCall)
	assert.Empty(t, out[0].FunctionCall.Name, "langchaingo now keeps the function name")

	// FromToolCalls fails honestly on such a call rather than inventing one.
	_, err = intent.FromToolCalls(out)
	assert.ErrorIs(t, err, intent.ErrInvalidIntent)
}

func mustCalls(t *testing.T, calls ...llms.ToolCall) intent.Output {
	t.Helper()
	o, err := intent.FromToolCalls(calls)
	require.NoError(t, err)
	return o
}
