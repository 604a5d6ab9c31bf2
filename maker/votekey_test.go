package maker

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyedCounter is counter with a typed key: intent.Key of Decode's
// Output, or a key of its own when bogus (to see which key votes).
type keyedCounter struct {
	counter
	calls atomic.Int64
	bogus bool
	panic bool
}

func (c *keyedCounter) DecodeKey(r Reply) (intent.Output, uint64, error) {
	c.calls.Add(1)
	if c.panic {
		panic("typed key")
	}
	out, err := c.Decode(r)
	if err != nil {
		return out, 0, err
	}
	if c.bogus {
		return out, 7, nil // every answer votes together
	}
	k, err := intent.Key(out)
	return out, k, err
}

func TestVoteKeyerKeysTheRace(t *testing.T) {
	plain := &counter{target: 20}
	repP, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}}).Solve(context.Background(), plain)
	require.NoError(t, err)
	keyed := &keyedCounter{counter: counter{target: 20}}
	repK, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}}).Solve(context.Background(), keyed)
	require.NoError(t, err)
	assert.Positive(t, keyed.calls.Load(), "DecodeKey is called")
	assert.Equal(t, repP.Counts, repK.Counts)
	assert.Equal(t, repP.Flags, repK.Flags)

	// The typed key is the one that votes: with every answer keyed 7,
	// the wrong sample 1 votes with the right ones and each step ends a
	// sample earlier.
	bogus := &keyedCounter{counter: counter{target: 20}, bogus: true}
	repB, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}}).Solve(context.Background(), bogus)
	require.NoError(t, err)
	assert.Less(t, repB.Launched, repK.Launched)

	// A panic in DecodeKey fails the step at once, as one in Decode.
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}}).Solve(context.Background(), &keyedCounter{counter: counter{target: 3}, panic: true})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrTaskPanic), "%v", err)
}
