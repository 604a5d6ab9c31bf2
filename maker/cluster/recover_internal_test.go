package cluster

import (
	"context"
	"errors"
	"fmt"
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
	// One flight at a time: the lost ack is the first publication's.
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

// refuser is a JetStream that refuses the publication of one job.
type refuser struct {
	jetstream.JetStream
	id string
}

var errRefused = errors.New("maximum messages per subject exceeded")

func (r *refuser) PublishMsg(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if m.Header.Get("X-Test-Job") == r.id {
		return nil, errRefused
	}
	return r.JetStream.PublishMsg(ctx, m, opts...)
}

// One job refused when recover asks again (its key at its bound) does not
// hold back the others: each is asked, and the refusal is returned for
// the next tick.
func TestRecoverAsksEveryJobPastARefusal(t *testing.T) {
	t.Parallel()
	js := &refuser{JetStream: testJS(t), id: "refused"}
	ctx := context.Background()
	d, err := NewDrawer(ctx, js, DrawerConfig{NoWorker: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	subject := jobsSubject + RouteToken("r")
	var flights []*flight
	d.mu.Lock()
	ids := []string{"refused"} // among 30: recover ranges over a map, and stopped at the refusal it would miss the rest but 1 in 30 times
	for i := range 29 {
		ids = append(ids, fmt.Sprint("job", i))
	}
	for _, id := range ids {
		f := &flight{id: id, subject: subject, data: []byte(`{}`), header: nats.Header{"X-Test-Job": {id}}}
		flights = append(flights, f)
		d.pending[id] = f
	}
	d.mu.Unlock()
	t.Cleanup(func() { d.mu.Lock(); clear(d.pending); d.mu.Unlock() })

	require.ErrorIs(t, d.recover(), errRefused)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range flights {
		if f.id == "refused" {
			assert.True(t, f.reasking, "the refused job is asked again at the next tick")
			continue
		}
		assert.NotZero(t, f.seq, "job %s asked again", f.id)
	}
	assert.Equal(t, int64(29), d.reasked.Load())
}
