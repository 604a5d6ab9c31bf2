package cluster

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDelivery is a job the agent holds for a worker; it records the
// acts done on it (the methods not overridden are never called).
type fakeDelivery struct {
	jetstream.Msg
	acked, naked int
}

func (m *fakeDelivery) Ack() error { m.acked++; return nil }
func (m *fakeDelivery) Nak() error { m.naked++; return nil }

// TestActRefusesAnUnknownOpAndKeepsTheDelivery: a worker's act with an
// op the agent does not know is refused, and the delivery stays held,
// so the worker's next (valid) act on it still reaches the job; an
// unknown op used to drop the delivery, leaving the job to come back
// only after its ack wait.
func TestActRefusesAnUnknownOpAndKeepsTheDelivery(t *testing.T) {
	t.Parallel()
	msg := &fakeDelivery{}
	a := &Agent{work: deliveries{held: map[string]*held{"h1": {msg: msg, id: "w1"}}}}
	err := a.act("w1", ackRequest{Handle: "h1", Op: "bogus"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"bogus"`)
	require.NoError(t, a.act("w1", ackRequest{Handle: "h1", Op: "ack"}), "the delivery is still held")
	assert.Equal(t, 1, msg.acked)
	assert.Zero(t, msg.naked)
	assert.Error(t, a.act("w1", ackRequest{Handle: "h1", Op: "ack"}), "an acknowledged delivery is gone")
}
