package cluster

import (
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestALateLostActIsAStrike (review13, high): a lost act is a hand-back
// with no word; sent past two thirds of the ack wait it is struck as the
// nak it stands for (TestSittingThenHandingBackIsTimingOut). Before, a
// sitter held every job of its pulls for 0.9 of the ack wait, then named
// the pull lost with nothing kept, and kept its whole room for ever.
func TestALateLostActIsAStrike(t *testing.T) {
	t.Parallel()
	const wait = 10 * time.Second
	r := rooms{ackWait: wait}
	t0 := time.Now()
	require.Equal(t, 4, r.reserve("K", 4, 4, t0))
	for i := range 4 {
		require.True(t, r.hold("K", string(rune('a'+i)), "p", uint64(i+1), wait, t0))
	}
	at := t0.Add(9 * wait / 10)
	gone, _ := r.lost("K", "p", nil, at)
	assert.Len(t, gone, 4)
	assert.Less(t, r.reserve("K", 4+maxPull, 4, at), 4+maxPull,
		"four jobs sat on for 9 s of 10 and handed back unanswered: the room must tighten")
}

// countedMsg is a held delivery that counts its hand-backs.
type countedMsg struct {
	jetstream.Msg
	naks int
}

func (m *countedMsg) Nak() error { m.naks++; return nil }

// TestALostActOfAnotherConnectionLeavesNoJobUnbooked (review13, high):
// the connection identity is the worker's to choose (it may publish on
// mdap.engine.work.<key>.>), so one credential pulls as K.a and sends
// the lost act as K.b. The book does not forget a job the agent still
// holds for K.a: either both forget it (handed back) or neither. Before,
// the book dropped it and the agent kept it: held jobs with no bound.
func TestALostActOfAnotherConnectionLeavesNoJobUnbooked(t *testing.T) {
	t.Parallel()
	const wait = 10 * time.Second
	a := &Agent{log: slog.New(slog.DiscardHandler), work: deliveries{held: map[string]*held{}}, rooms: rooms{ackWait: wait}}
	t0 := time.Now()
	require.Equal(t, 1, a.rooms.reserve("K.a", 1, 1, t0))
	require.True(t, a.rooms.hold("K.a", "h", "p", 7, wait, t0))
	msg := &countedMsg{}
	a.work.held["h"] = &held{msg: msg, id: "K.a", at: t0}

	assert.ErrorIs(t, a.handBackLost("K.b", ackRequest{Op: "lost", Pull: "p"}), errNoDelivery, "K.b holds no job of the pull here")

	a.work.mu.Lock()
	_, stillHeld := a.work.held["h"]
	a.work.mu.Unlock()
	if stillHeld {
		assert.Zero(t, msg.naks)
		assert.Equal(t, maxPull, a.rooms.reserve("K.a", 1+maxPull, 1, t0.Add(time.Second)),
			"K.a still holds the job through the agent, yet its room counts it no more: the room bounds nothing")
		a.rooms.unreserve("K.a", 1+maxPull)
		// Redelivered as the server's ack wait passes, a moment before
		// the agent's clock says so.
		at := t0.Add(wait - time.Millisecond)
		require.Equal(t, 1, a.rooms.reserve("K.a", 1, 1, at))
		assert.False(t, a.rooms.hold("K.a", "h2", "q", 7, wait, at),
			"the unanswered job redelivered to its holder is its timeout (TestARedeliveryOfAHeldJobIsItsTimeout): a strike, not a fresh job")
	}
	assert.False(t, !stillHeld && msg.naks == 0, "forgotten by both without a hand-back")
}
