package replyfile_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/replyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestReadReplyReadsEachShape checks what Read takes from each file
// shape, and that anything it does not recognise is the reply's text.
func TestReadReplyReadsEachShape(t *testing.T) {
	grep := func(id, args string) llms.ToolCall {
		return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: "grep", Arguments: args}}
	}
	for _, c := range []struct {
		name, file, body string
		want             maker.Reply // OutputTokens -1: estimated from the text and calls
	}{
		{"calls", "r.json", ` [{"id":"c1","type":"function","function":{"name":"grep","arguments":"{\"p\":1}"}}]`,
			maker.Reply{ToolCalls: []llms.ToolCall{grep("c1", `{"p":1}`)}, StopReason: "tool_calls", OutputTokens: -1}},
		{"calls, upper-case extension", "R.JSON", `[{"id":"c1","type":"function","function":{"name":"grep","arguments":{"p":1}}}]`,
			maker.Reply{ToolCalls: []llms.ToolCall{grep("c1", `{"p":1}`)}, StopReason: "tool_calls", OutputTokens: -1}},
		{"one call", "r.json", `{"id":"c2","type":"function","function":{"name":"grep","arguments":""}}`,
			maker.Reply{ToolCalls: []llms.ToolCall{grep("c2", "")}, StopReason: "tool_calls", OutputTokens: -1}},
		{"chat completion with usage", "r.json", `{"choices":[{"finish_reason":"length","message":{"content":"{\"a\": 1","tool_calls":[{"id":"c3","type":"function","function":{"name":"grep","arguments":"{}"}},{"id":"x"}]}}],"usage":{"prompt_tokens":5,"completion_tokens":750}}`,
			maker.Reply{Text: `{"a": 1`, ToolCalls: []llms.ToolCall{grep("c3", "{}")}, StopReason: "length", InputTokens: 5, OutputTokens: 750}},
		{"chat completion with usage of 0 output tokens", "r.json", `{"choices":[{"finish_reason":"stop","message":{"content":""}}],"usage":{"prompt_tokens":5,"completion_tokens":0}}`,
			maker.Reply{StopReason: "stop", InputTokens: 5}},
		{"chat completion without usage", "r.json", `{"choices":[{"finish_reason":"stop","message":{"content":null}}]}`,
			maker.Reply{StopReason: "stop", OutputTokens: -1}},
		{"anthropic message", "r.json", `{"content":[{"type":"text","text":"Let me "},{"type":"text","text":"search."},{"type":"tool_use","id":"t1","name":"grep","input":{"p":1}},{"type":"tool_use","id":"t2","name":"grep"}],"stop_reason":"tool_use","usage":{"input_tokens":50,"output_tokens":12}}`,
			maker.Reply{Text: "Let me search.", ToolCalls: []llms.ToolCall{grep("t1", `{"p":1}`), grep("t2", "")}, StopReason: "tool_use", InputTokens: 50, OutputTokens: 12}},
		{"anthropic message without usage", "r.json", `{"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`,
			maker.Reply{Text: "hi", StopReason: "end_turn", OutputTokens: -1}},
	} {
		r, err := replyfile.Read(c.file, []byte(c.body))
		require.NoError(t, err, c.name)
		want := c.want
		if want.OutputTokens == -1 {
			want.OutputTokens, want.Estimated = maker.EstimateReplyTokens(want.Text, want.ToolCalls), true
		}
		assert.Equal(t, want, r, c.name)
	}
	for name, c := range map[string]struct{ file, body string }{
		"text file":                         {"r.txt", `[{"id":"c1","type":"function","function":{"name":"grep","arguments":"{}"}}]`},
		"json file of prose":                {"r.json", "I will search."},
		"array that is not JSON":            {"r.json", `[{"id":`},
		"array with a call and no function": {"r.json", `[{"id":"c1","type":"function","function":{"name":"grep"}},{"id":"c2"}]`},
		"object that is not JSON":           {"r.json", `{"choices": [`},
		"call without a function":           {"r.json", `{"id":"c1","function":null}`},
		"call that is not a call":           {"r.json", `{"function":"grep"}`},
		"choices of another shape":          {"r.json", `{"choices":"all"}`},
		"content that is not a list":        {"r.json", `{"content":"hello"}`},
		"content of another shape":          {"r.json", `{"content":[1,2]}`},
		"content part of another type":      {"r.json", `{"content":[{"type":"text","text":"a"},{"type":"image"}]}`},
		"another object":                    {"r.json", `{"tool_intent":{"tool":"grep","args":{}}}`},
	} {
		r, err := replyfile.Read(c.file, []byte(c.body))
		require.NoError(t, err, name)
		want := maker.Reply{Text: c.body, OutputTokens: maker.EstimateReplyTokens(c.body, nil), Estimated: true}
		assert.Equal(t, want, r, "%s: read as text", name)
	}
	_, err := replyfile.Read("r.json", []byte(`{"choices":[]}`))
	assert.ErrorIs(t, err, maker.ErrNoChoice)
}
