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
// take it, never back to the identity that handed it back; a withdrawal
// drops it; its delay's end hands it back to JetStream, and its ack wait
// is renewed at a third of it meanwhile; past maxHandoffs none is kept.
func TestAHandedBackJobGoesToAnotherWorkerOnly(t *testing.T) {
	var k handoffs
	now := time.Now()
	anyMsg := func(jetstream.Msg) bool { return true }
	none := func(jetstream.Msg) bool { return false }
	ready := k.waiter()
	require.True(t, k.put(&handoff{seq: 1, route: "r", from: "sitter", until: now.Add(time.Minute), wait: 3 * time.Second, kept: now}))
	select {
	case <-ready:
	default:
		t.Fatal("a pull waiting is woken")
	}
	assert.Nil(t, k.take("r", "sitter", anyMsg), "not back to the identity that handed it back")
	assert.Nil(t, k.take("other", "honest", anyMsg), "not to a pull of another route")
	assert.Nil(t, k.take("r", "honest", none), "not to one that may not take it")
	h := k.take("r", "honest", anyMsg)
	require.NotNil(t, h)
	assert.Equal(t, uint64(1), h.seq)
	assert.Nil(t, k.take("r", "honest", anyMsg), "taken once")

	require.True(t, k.put(&handoff{seq: 2, route: "r", from: "sitter", until: now.Add(time.Minute), wait: 3 * time.Second, kept: now}))
	assert.True(t, k.drop(2))
	assert.False(t, k.drop(2))
	assert.Nil(t, k.take("r", "honest", anyMsg), "a withdrawn job is given to no one")

	require.True(t, k.put(&handoff{seq: 3, route: "r", from: "sitter", until: now.Add(2 * time.Second), wait: 3 * time.Second, kept: now}))
	back, renew := k.due(now.Add(500*time.Millisecond), false)
	assert.Empty(t, back)
	assert.Empty(t, renew, "its ack wait is not due for renewal yet")
	back, renew = k.due(now.Add(time.Second), false)
	assert.Empty(t, back)
	assert.Len(t, renew, 1, "renewed at a third of its ack wait")
	back, _ = k.due(now.Add(2*time.Second), false)
	assert.Len(t, back, 1, "back to JetStream at its delay's end")

	for i := range maxHandoffs {
		require.True(t, k.put(&handoff{seq: uint64(10 + i), route: "r", until: now.Add(time.Minute)}))
	}
	assert.False(t, k.put(&handoff{seq: 1, route: "r"}), "at most maxHandoffs kept")
	back, _ = k.due(now, true)
	assert.Len(t, back, maxHandoffs, "every one handed back when the agent stops")
}
