package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// watchEvery is how often a Drawer looks for a reconnection.
const watchEvery = 250 * time.Millisecond

// replyPullExpiry is how long one pull of the reply consumer waits; the
// server's heartbeats come every half of it, and two missed ones start
// the pull again, so a pull that died with a stalled node is replaced
// within 5 s (nats.go's default: 30 s). A pull every 5 s per coordinator
// costs the server nothing it would notice.
const replyPullExpiry = 5 * time.Second

// consumeReplies creates this Drawer's reply consumer if it does not
// exist and consumes it, in place of any earlier consumption.
func (d *Drawer) consumeReplies(ctx context.Context) error {
	var cons jetstream.Consumer
	// The request names this coordinator's identity, as its permissions
	// require: the engine counts each identity's Drawers (DrawerQuota).
	err := d.askReplies(ctx)
	switch {
	case err == nil: // made by the engine (a server with roles)
		cons, err = d.js.Consumer(ctx, RepliesStream, d.id)
	case errors.Is(err, errNoAgent):
		// Made here, as the agent would (a server without roles; a
		// stream the engine provisioned takes the replies of its Drawers
		// only, so this one's subject is added too).
		if err = serveDrawer(ctx, d.js, d.id, ProvisionConfig{}, &replySpace{}, nil, ""); err == nil {
			cons, err = d.js.Consumer(ctx, RepliesStream, d.id)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: the reply consumer: %w", ErrEngine, err)
	}
	cc, err := cons.Consume(d.onReply, jetstream.PullExpiry(replyPullExpiry), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		d.log.Debug("reply consumer", "err", err)
	}))
	if err != nil {
		return fmt.Errorf("%w: consume replies: %w", ErrEngine, err)
	}
	d.mu.Lock()
	old := d.cc
	d.cc = cc
	d.mu.Unlock()
	if old != nil {
		old.Stop()
	}
	return nil
}

// watch recovers after every reconnection (see recover) until Close.
func (d *Drawer) watch() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	seen := d.nc.Stats().Reconnects
	for {
		select {
		case <-d.done:
			return
		case <-t.C:
		}
		if n := d.nc.Stats().Reconnects; n != seen && d.nc.IsConnected() {
			if err := d.recover(); err != nil {
				d.log.Debug("recover after a reconnection; trying again", "err", err)
				continue
			}
			seen = n
		}
	}
}

// recover makes the engine whole again after a reconnection: jobs and
// replies live in memory, so a server that restarted lost the sample
// streams, this Drawer's reply consumer and every job and reply in
// flight. It creates the streams and the consumer again if they are gone
// and publishes every job still awaited again under its own message id:
// a job the server still holds, or took within the duplicate window, is
// dropped as a duplicate, and a job answered twice counts once. So a lost
// message costs a retry, never a lost or duplicated sample.
func (d *Drawer) recover() error {
	ctx, cancel := context.WithTimeout(context.Background(), withdrawTimeout)
	defer cancel()
	jobs, err := ensureSampleStreams(ctx, d.js, d.replicas)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.jobs = jobs
	d.mu.Unlock()
	if _, err := d.js.Consumer(ctx, RepliesStream, d.id); errors.Is(err, jetstream.ErrConsumerNotFound) {
		if err := d.consumeReplies(ctx); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("%w: the reply consumer: %w", ErrEngine, err)
	}
	d.mu.Lock()
	flights := make([]*flight, 0, len(d.pending))
	for _, f := range d.pending {
		flights = append(flights, f)
	}
	d.mu.Unlock()
	// A job refused (its key at its bound, say) does not hold back the
	// others: each is asked again, and the first refusal is returned for
	// the watcher to try again.
	var first error
	for _, f := range flights {
		ack, err := d.js.PublishMsg(ctx, &nats.Msg{Subject: f.subject, Data: f.data, Header: f.header},
			jetstream.WithMsgID(f.id), jetstream.WithExpectStream(JobsStream), jetstream.WithMsgTTL(max(d.timeout, time.Second)))
		d.mu.Lock()
		if err != nil {
			f.reasking = true
			d.mu.Unlock()
			if first == nil {
				first = fmt.Errorf("%w: ask job %s again: %w", ErrEngine, f.id, err)
			}
			continue
		}
		counted := !ack.Duplicate || f.reasking
		if !ack.Duplicate {
			f.seq = ack.Sequence
		}
		f.reasking = false
		d.mu.Unlock()
		if counted {
			d.reasked.Add(1)
		}
	}
	return first
}

// jobStream returns the jobs stream as last found.
func (d *Drawer) jobStream() jetstream.Stream {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.jobs
}
