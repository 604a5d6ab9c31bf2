package inspect

import (
	"testing"

	"github.com/mdap-go/mdap/maker"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestInspectExplainsVotes(t *testing.T) {
	a := Reply(maker.Reply{Text: "```json\n{\"b\": 1.0, \"a\": [1]}\n```", StopReason: "stop"}, 0, maker.FlagRules{}, nil)
	b := Reply(maker.Reply{Text: `Here: {"a":[1],"b":1}`, StopReason: "stop"}, 0, maker.FlagRules{}, nil)
	require.Empty(t, a.Flag)
	assert.Equal(t, `{"a":[1],"b":1}`, a.Canonical)
	assert.Equal(t, a.Key, b.Key, "same answer, same key")

	native := Reply(maker.Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: "grep", Arguments: `{"pattern":"x"}`}}}}, 0, maker.FlagRules{}, nil)
	text := Reply(maker.Reply{Text: `{"tool_intent":{"tool":"grep","args":{"pattern":"x"}}}`}, 0, maker.FlagRules{}, nil)
	assert.Equal(t, native.Key, text.Key, "a native call and the same call as text vote together")

	cut := Reply(maker.Reply{Text: `{"a":`, StopReason: "length"}, 0, maker.FlagRules{}, nil)
	assert.Equal(t, "cut off", cut.Flag)
	bad := Reply(maker.Reply{Text: "no answer here"}, 0, maker.FlagRules{}, nil)
	assert.Equal(t, "unparseable", bad.Flag)
	assert.NotEmpty(t, bad.Reason)
	assert.Empty(t, bad.Key)
}

func TestRationaleBesideANativeCallIsItsRationale(t *testing.T) {
	call := []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: "grep", Arguments: `{"pattern":"x"}`}}}
	a := Reply(maker.Reply{Text: `{"rationale": "look for x"}`, ToolCalls: call}, 0, maker.FlagRules{}, nil)
	b := Reply(maker.Reply{Text: `{"rationale": "another reason"}`, ToolCalls: call}, 0, maker.FlagRules{}, nil)
	c := Reply(maker.Reply{ToolCalls: call}, 0, maker.FlagRules{}, nil)
	require.Empty(t, a.Flag, a.Reason)
	assert.Equal(t, c.Key, a.Key, "a rationale never takes part in the key")
	assert.Equal(t, a.Key, b.Key)
	assert.Equal(t, "look for x", a.Output.Intent.Rationale)
	assert.Nil(t, a.Output.Value)
}

// TestInJudgesWithTheSolversCap: In judges with the solver's reply cap
// and flags, Reply with the ones it is given (checked by making In use
// maker.Solver{} instead of s: the first assertion failed).
func TestInJudgesWithTheSolversCap(t *testing.T) {
	r := maker.Reply{Text: `{"a": 1}`, StopReason: "stop", OutputTokens: 20}
	s := &maker.Solver{Config: maker.Config{MaxTokens: 10}}
	assert.Equal(t, "overlong", In(s, nil, r).Flag, "20 output tokens over the solver's cap of 10")
	assert.Empty(t, Reply(r, 0, maker.FlagRules{}, nil).Flag, "under DefaultMaxTokens the same reply votes")
	lax := &maker.Solver{Config: maker.Config{MaxTokens: 10, Flags: maker.FlagRules{AllowOverlong: true}}}
	v := In(lax, nil, r)
	require.Empty(t, v.Flag, v.Reason)
	assert.Equal(t, Reply(r, 0, maker.FlagRules{}, nil).Key, v.Key, "the same answer, the same key")
}
