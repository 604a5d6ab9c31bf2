package cluster

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAHandedBackJobGoesToAnotherWorkerOnly: a job kept for other
// workers goes to a pull of its route from another identity that may
// take it, before its delay's end, never back to the identity that
// handed it back; a withdrawal drops it, and so does a later delivery of
// it; its delay's end hands it back to JetStream, and its ack wait is
// renewed at a third of it meanwhile.
func TestAHandedBackJobGoesToAnotherWorkerOnly(t *testing.T) {
	var k handoffs
	now := time.Now()
	anyMsg := func(jetstream.Msg) bool { return true }
	none := func(jetstream.Msg) bool { return false }
	keep := func(seq, n uint64, from string, until time.Duration) {
		t.Helper()
		require.True(t, k.put(&handoff{seq: seq, n: n, route: "r", from: from, until: now.Add(until), wait: 3 * time.Second, kept: now}))
	}
	ready, other := k.waiter("r"), k.waiter("other")
	keep(1, 1, "sitter", time.Minute)
	select {
	case <-ready:
	default:
		t.Fatal("a pull of its route waiting is woken")
	}
	select {
	case <-other:
		t.Fatal("a pull of another route is not woken")
	default:
	}
	assert.Nil(t, k.take("r", "sitter", now, anyMsg), "not back to the identity that handed it back")
	assert.Nil(t, k.take("other", "honest", now, anyMsg), "not to a pull of another route")
	assert.Nil(t, k.take("r", "honest", now, none), "not to one that may not take it")
	assert.Nil(t, k.take("r", "honest", now.Add(time.Minute), anyMsg), "not past its delay's end (or its expiry)")
	h := k.take("r", "honest", now, anyMsg)
	require.NotNil(t, h)
	assert.Equal(t, uint64(1), h.seq)
	assert.Nil(t, k.take("r", "honest", now, anyMsg), "taken once")

	keep(2, 1, "sitter", time.Minute)
	assert.True(t, k.drop(2))
	assert.False(t, k.drop(2))
	assert.Nil(t, k.take("r", "honest", now, anyMsg), "a withdrawn job is given to no one")

	keep(3, 2, "sitter", time.Minute)
	k.supersede(3, 2)
	k.supersede(4, 3)
	assert.NotNil(t, k.take("r", "honest", now, anyMsg), "kept past news of its own delivery or of another job's")
	keep(3, 2, "sitter", time.Minute)
	k.supersede(3, 3)
	assert.Nil(t, k.take("r", "honest", now, anyMsg), "a job delivered again is given to no one")

	keep(5, 1, "sitter", 2*time.Second)
	back, renew := k.due(now.Add(500*time.Millisecond), false)
	assert.Empty(t, back)
	assert.Empty(t, renew, "its ack wait is not due for renewal yet")
	back, renew = k.due(now.Add(time.Second), false)
	assert.Empty(t, back)
	assert.Len(t, renew, 1, "renewed at a third of its ack wait")
	back, _ = k.due(now.Add(2*time.Second), false)
	assert.Len(t, back, 1, "back to JetStream at its delay's end")
	assert.Zero(t, k.n)
}

// TestOneIdentityCannotFillTheHandoffPool (review21, low): an agent keeps
// at most maxHandoffs jobs for other workers, and at most
// maxHandoffsPerKey that one identity handed back, so one worker
// credential skipping every publisher cannot make every other identity's
// hand-back a delayed NAK again; when the agent stops every job kept is
// handed back.
func TestOneIdentityCannotFillTheHandoffPool(t *testing.T) {
	var k handoffs
	now := time.Now()
	put := func(seq int, from string) bool {
		return k.put(&handoff{seq: uint64(seq), route: "r", from: from, until: now.Add(time.Minute), wait: 10 * time.Second, kept: now})
	}
	kept := 0
	for i := range maxHandoffs {
		if put(1+i, "sitter") {
			kept++
		}
	}
	assert.Equal(t, maxHandoffsPerKey, kept, "one identity keeps at most maxHandoffsPerKey")
	assert.True(t, put(1<<40, "honest"), "an honest identity's hand-back is kept whatever one other identity handed back")
	for i := range maxHandoffs {
		put(1<<41+i, string(rune('a'+i%26))+"x")
	}
	assert.Equal(t, maxHandoffs, k.n, "at most maxHandoffs in all")
	assert.False(t, put(1<<42, "late"))
	back, _ := k.due(now, true)
	assert.Len(t, back, maxHandoffs, "every one handed back when the agent stops")
	assert.Zero(t, k.n)
	assert.Empty(t, k.by)
}
