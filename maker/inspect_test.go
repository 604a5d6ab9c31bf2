package maker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestInspectExplainsVotes(t *testing.T) {
	a := Inspect(Reply{Text: "```json\n{\"b\": 1.0, \"a\": [1]}\n```", StopReason: "stop"}, 0, FlagRules{}, nil)
	b := Inspect(Reply{Text: `Here: {"a":[1],"b":1}`, StopReason: "stop"}, 0, FlagRules{}, nil)
	require.Empty(t, a.Flag)
	assert.Equal(t, `{"a":[1],"b":1}`, a.Canonical)
	assert.Equal(t, a.Key, b.Key, "same answer, same key")

	native := Inspect(Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: "grep", Arguments: `{"pattern":"x"}`}}}}, 0, FlagRules{}, nil)
	text := Inspect(Reply{Text: `{"tool_intent":{"tool":"grep","args":{"pattern":"x"}}}`}, 0, FlagRules{}, nil)
	assert.Equal(t, native.Key, text.Key, "a native call and the same call as text vote together")

	cut := Inspect(Reply{Text: `{"a":`, StopReason: "length"}, 0, FlagRules{}, nil)
	assert.Equal(t, "cut off", cut.Flag)
	bad := Inspect(Reply{Text: "no answer here"}, 0, FlagRules{}, nil)
	assert.Equal(t, "unparseable", bad.Flag)
	assert.NotEmpty(t, bad.Reason)
	assert.Empty(t, bad.Key)
}

func TestHugeReplyFlaggedUnread(t *testing.T) {
	huge := Reply{Text: `{"a":"` + strings.Repeat("x", MaxReplyBytes) + `"}`, StopReason: "stop", OutputTokens: 1}
	v := Inspect(huge, 0, FlagRules{AllowOverlong: true}, nil)
	assert.Equal(t, "overlong", v.Flag, "a reply over MaxReplyBytes is flagged whatever the rules")
}

func TestRationaleBesideANativeCallIsItsRationale(t *testing.T) {
	call := []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: "grep", Arguments: `{"pattern":"x"}`}}}
	a := Inspect(Reply{Text: `{"rationale": "look for x"}`, ToolCalls: call}, 0, FlagRules{}, nil)
	b := Inspect(Reply{Text: `{"rationale": "another reason"}`, ToolCalls: call}, 0, FlagRules{}, nil)
	c := Inspect(Reply{ToolCalls: call}, 0, FlagRules{}, nil)
	require.Empty(t, a.Flag, a.Reason)
	assert.Equal(t, c.Key, a.Key, "a rationale never takes part in the key")
	assert.Equal(t, a.Key, b.Key)
	assert.Equal(t, "look for x", a.Output.Intent.Rationale)
	assert.Nil(t, a.Output.Value)
}
