package maker

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJudgeMemoJudgesEachReplyOnce: over steps of up to ten distinct
// replies (past the memo's inline room), each reply of a step is judged
// once and every sample gets its own reply's verdict; a reply that
// differs only in its stop reason, its token counts or Estimated is
// another reply; reset forgets a step's verdicts, so the next step judges
// again; a panicking judgement is not shared.
func TestJudgeMemoJudgesEachReplyOnce(t *testing.T) {
	var jm judgeMemo
	for step := range 3 {
		distinct := []int{1, memoInline, memoInline + 1, 10}[step]
		judged := map[string]int{}
		judgeOf := func(r Reply) func() judgement {
			return func() judgement {
				judged[fmt.Sprint(r)]++
				return judgement{key: uint64(len(r.Text)*1000 + r.OutputTokens)}
			}
		}
		for range 3 {
			for i := range distinct {
				// Distinct strings with equal bytes: the memo compares
				// texts, not their addresses.
				r := Reply{Text: string([]byte(fmt.Sprintf("%0*d", i+1, step))), StopReason: "stop"}
				j := jm.judge(r, judgeOf(r))
				assert.Equal(t, uint64((i+1)*1000), j.key, "step %d reply %d", step, i)
			}
		}
		require.Len(t, judged, distinct)
		// The first memoInline replies are kept inline, the rest in the map.
		assert.Equal(t, min(distinct, memoInline), jm.n, "step %d", step)
		assert.Len(t, jm.extra, max(0, distinct-memoInline), "step %d", step)
		for r, n := range judged {
			assert.Equal(t, 1, n, "step %d: %s judged %d times", step, r, n)
		}
		// Another stop reason, token count or estimate is another reply.
		base := Reply{Text: "0", StopReason: "stop"}
		for _, r := range []Reply{{Text: "0", StopReason: "length"}, {Text: "0", StopReason: "stop", InputTokens: 1}, {Text: "0", StopReason: "stop", OutputTokens: 1}, {Text: "0", StopReason: "stop", Estimated: true}} {
			n := 0
			jm.judge(r, func() judgement { n++; return judgement{key: 7} })
			assert.Equal(t, 1, n, "%+v is not %+v", r, base)
		}
		jm.reset()
		assert.Zero(t, jm.n)
		assert.Empty(t, jm.extra)
	}

	// A panicking judgement (ErrTaskPanic) is not shared: the next sample
	// of the same reply judges for itself.
	n := 0
	r := Reply{Text: "panics"}
	for range 3 {
		jm.judge(r, func() judgement {
			n++
			return judgement{flag: ErrTaskPanic, reason: fmt.Errorf("%w: boom", ErrTaskPanic)}
		})
	}
	assert.Equal(t, 3, n)
	jm.reset()
}

// TestJudgeMemoWaitsForTheJudgingSample: samples drawn at once with the
// same reply wait for the one judging it and share its verdict, whether
// the reply is one of the memo's inline ones or past them.
func TestJudgeMemoWaitsForTheJudgingSample(t *testing.T) {
	var jm judgeMemo
	for _, distinct := range []int{1, memoInline + 3} {
		var calls [16]atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 * distinct {
			wg.Go(func() {
				i := g % distinct
				r := Reply{Text: fmt.Sprint("reply ", i)}
				j := jm.judge(r, func() judgement {
					calls[i].Add(1)
					return judgement{key: uint64(i + 1)}
				})
				assert.Equal(t, uint64(i+1), j.key)
			})
		}
		wg.Wait()
		for i := range distinct {
			assert.Equal(t, int64(1), calls[i].Load(), "reply %d", i)
		}
		jm.reset()
	}
	// The memo holds no verdict of a past step.
	err := errors.New("stale")
	got := jm.judge(Reply{Text: "reply 0"}, func() judgement { return judgement{reason: err} })
	assert.Equal(t, err, got.reason)
}
