package cluster

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ackLoser is a JetStream whose next lose publications are stored by the
// server but answered with an error, as when the ack is lost on the way
// back under load.
type ackLoser struct {
	jetstream.JetStream
	lose atomic.Int32
}

var errAckLost = errors.New("ack lost")

func (a *ackLoser) PublishMsg(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := a.JetStream.PublishMsg(ctx, m, opts...)
	if err == nil && a.lose.Add(-1) >= 0 {
		return nil, errAckLost
	}
	return ack, err
}

// A job that recover asks again is counted once in Reasked: when the try
// that stored it lost its ack, the next try is answered duplicate (its
// own job) and counts; a job the server kept all along is answered
// duplicate and does not count.
func TestRecoverCountsAReaskOnceAfterALostAck(t *testing.T) {
	t.Parallel()
	js := &ackLoser{JetStream: testJS(t)}
	ctx := context.Background()
	d, err := NewDrawer(ctx, js, DrawerConfig{NoWorker: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	subject := jobsSubject + RouteToken("r")
	job := func(id string) *flight {
		return &flight{id: id, subject: subject, data: []byte(`{}`), header: nats.Header{}}
	}
	lost, kept := job("lost"), job("kept")
	_, err = js.PublishMsg(ctx, &nats.Msg{Subject: kept.subject, Data: kept.data, Header: kept.header},
		jetstream.WithMsgID(kept.id), jetstream.WithExpectStream(JobsStream))
	require.NoError(t, err, "the kept job's first publication")
	// One flight at a time: recover stops at the first failure, and
	// ranges over a map.
	d.mu.Lock()
	d.pending[lost.id] = lost
	d.mu.Unlock()
	t.Cleanup(func() { d.mu.Lock(); clear(d.pending); d.mu.Unlock() })

	js.lose.Store(1)
	require.ErrorIs(t, d.recover(), errAckLost, "the lost job stored, its ack lost")
	assert.Equal(t, int64(0), d.reasked.Load(), "not counted before a try is answered")
	require.NoError(t, d.recover(), "the next tick's try")
	assert.Equal(t, int64(1), d.reasked.Load(), "answered duplicate, but its own job: asked again once")
	require.NoError(t, d.recover(), "a third try")
	assert.Equal(t, int64(1), d.reasked.Load(), "the server holds it now: not asked again")

	d.mu.Lock()
	delete(d.pending, lost.id)
	d.pending[kept.id] = kept
	d.mu.Unlock()
	require.NoError(t, d.recover())
	assert.Equal(t, int64(1), d.reasked.Load(), "a job the server kept is not counted")
}
