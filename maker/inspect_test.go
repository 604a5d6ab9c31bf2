package maker

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"

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

// TestHugeReplyFlaggedUnread: a reply over MaxReplyBytes is flagged before
// it is parsed: the decoder never sees it, through Inspect or the solver.
// (Checked by moving judge's decode before its size check: both halves
// fail.)
func TestHugeReplyFlaggedUnread(t *testing.T) {
	huge := Reply{Text: `{"a":"` + strings.Repeat("x", MaxReplyBytes) + `"}`, StopReason: "stop", OutputTokens: 1}
	decoded := 0
	spy := func(r Reply) (intent.Output, error) {
		decoded++
		return DecodeReply(r)
	}
	v := Inspect(huge, 0, FlagRules{AllowOverlong: true}, spy)
	assert.Equal(t, "overlong", v.Flag, "a reply over MaxReplyBytes is flagged whatever the rules")
	assert.Zero(t, decoded, "the huge reply was never decoded")
	small := Inspect(Reply{Text: `{"a": 1}`, StopReason: "stop", OutputTokens: 1}, 0, FlagRules{}, spy)
	require.Empty(t, small.Flag, small.Reason)
	assert.Equal(t, 1, decoded, "the spy sees the replies that are decoded")

	// Through the solver: every sample of step 0 is huge until sample 4.
	task := &hugeSpy{counter: counter{target: 1}}
	model := &scripted{reply: func(id SampleID, p string) (string, string) {
		if id.Index < 4 {
			return huge.Text, "stop"
		}
		return noisy(id, p)
	}}
	_, err := (&Solver{Config: Config{Vote: vote.Config{K: 1, Parallel: 1}, Flags: FlagRules{AllowOverlong: true}}, Model: model}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Zero(t, task.huge.Load(), "the solver never decoded a reply over MaxReplyBytes")
}

// hugeSpy is a counter task that counts the replies over MaxReplyBytes
// its Decode is given.
type hugeSpy struct {
	counter
	huge atomic.Int64
}

func (h *hugeSpy) Decode(r Reply) (intent.Output, error) {
	if len(r.Text) > MaxReplyBytes {
		h.huge.Add(1)
	}
	return h.counter.Decode(r)
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
