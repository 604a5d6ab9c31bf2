package maker

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ctxKey struct{}

// TestStepContextIsWithCancelCause: over random sequences of what a step
// does to its race context (ask for Done, cancel it with a cause, the
// parent cancelled with a cause, read a value, end the step), a
// stepContext reports what context.WithCancelCause of the same parent
// reports after every operation: Err, whether Done is closed once asked,
// the parent's values, its deadline, and context.Cause.
func TestStepContextIsWithCancelCause(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 7))
	errDraw, errParent := errors.New("draw's cause"), errors.New("parent's cause")
	for range 3000 {
		base, stopBase := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
		var parent context.Context = base
		deadline := time.Now().Add(time.Hour)
		if rng.IntN(2) == 0 {
			var stop context.CancelFunc
			parent, stop = context.WithDeadline(base, deadline)
			defer stop()
		}
		ref, refCancel := context.WithCancelCause(parent)
		c := newStepContext(parent)
		asked := false
		var ops []string
		for range 1 + rng.IntN(6) {
			switch rng.IntN(5) {
			case 0:
				ops = append(ops, "done")
				asked = true
				c.Done()
			case 1:
				ops = append(ops, "cancel")
				refCancel(errDraw)
				c.cancel(errDraw)
			case 2:
				ops = append(ops, "parent")
				stopBase(errParent)
			case 3:
				ops = append(ops, "end")
				refCancel(nil)
				c.end()
			case 4:
				ops = append(ops, "value")
			}
			require.Equal(t, ref.Err(), c.Err(), "Err after %v", ops)
			require.Equal(t, "v", c.Value(ctxKey{}), "the parent's values after %v", ops)
			d, ok := c.Deadline()
			rd, rok := ref.Deadline()
			require.Equal(t, rok, ok)
			require.True(t, d.Equal(rd))
			require.Equal(t, context.Cause(ref), context.Cause(c), "Cause after %v", ops)
			require.Equal(t, context.Cause(ref), c.cause(), "cause after %v", ops)
			if asked {
				select {
				case <-c.Done():
					require.Error(t, ref.Err(), "Done closed, the reference is live, after %v", ops)
				default:
					require.NoError(t, ref.Err(), "Done open, the reference is done, after %v", ops)
				}
			}
		}
		stopBase(nil)
		refCancel(nil)
	}
}

// TestStepContextMadeOnlyWhenAsked: reading Err and values makes no
// context of its own (nothing is registered with the parent); Done, a
// cancel, and Done after the step's end do, the last one cancelled.
func TestStepContextMadeOnlyWhenAsked(t *testing.T) {
	parent, stop := context.WithCancel(context.Background())
	defer stop()
	c := newStepContext(parent)
	assert.NoError(t, c.Err())
	assert.Nil(t, c.Value(ctxKey{}))
	assert.NoError(t, c.cause())
	assert.Nil(t, c.made.Load(), "nothing made")
	c.end()
	assert.ErrorIs(t, c.Err(), context.Canceled)
	assert.Nil(t, c.made.Load(), "ending makes nothing")
	select {
	case <-c.Done():
	default:
		t.Fatal("Done after the end is not closed")
	}
	assert.ErrorIs(t, context.Cause(c), context.Canceled)

	c = newStepContext(parent)
	c.cancel(errSnap)
	assert.NotNil(t, c.made.Load())
	assert.ErrorIs(t, c.cause(), errSnap)
	assert.ErrorIs(t, c.Err(), context.Canceled)
}

// TestStepContextMadeOnceConcurrently: draws asking for Done and
// cancelling at once share one context (-race checks the rest).
func TestStepContextMadeOnceConcurrently(t *testing.T) {
	for range 50 {
		c := newStepContext(context.Background())
		chans := make([]<-chan struct{}, 8)
		var wg sync.WaitGroup
		for i := range chans {
			wg.Go(func() {
				chans[i] = c.Done()
				if i == 3 {
					c.cancel(errSnap)
				}
				_ = c.Err()
			})
		}
		wg.Wait()
		for _, ch := range chans {
			assert.Equal(t, chans[0], ch)
		}
		<-chans[0]
		assert.ErrorIs(t, c.cause(), errSnap)
		c.end()
	}
}
