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
)

// TestHugeReplyFlaggedUnread: a reply over MaxReplyBytes is flagged before
// it is parsed: the decoder never sees it, through Judge or the solver.
// (Checked by moving judge's decode before its size check: both halves
// fail.)
func TestHugeReplyFlaggedUnread(t *testing.T) {
	huge := Reply{Text: `{"a":"` + strings.Repeat("x", MaxReplyBytes) + `"}`, StopReason: "stop", OutputTokens: 1}
	decoded := 0
	spy := func(r Reply) (intent.Output, error) {
		decoded++
		return DecodeReply(r)
	}
	s := &Solver{Config: Config{Flags: FlagRules{AllowOverlong: true}}}
	v := s.Judge(huge, spy)
	assert.ErrorIs(t, v.Flag, ErrOverlong, "a reply over MaxReplyBytes is flagged whatever the rules")
	assert.Zero(t, decoded, "the huge reply was never decoded")
	small := (&Solver{}).Judge(Reply{Text: `{"a": 1}`, StopReason: "stop", OutputTokens: 1}, spy)
	require.NoError(t, small.Flag, small.Reason)
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
