package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// unlessRefused runs op, but returns at once an error wrapping ErrAuth
// when the server refuses this connection's publication on subject, or
// on any subject under it when subject ends in ".>" (a permission
// violation, which NATS reports apart from the request, so op would
// otherwise wait out ctx). The refusal is seen as the connection's last
// error, checked every refusalPoll; it is this call's answer, so the
// error handler of Connect's connections (printAsyncErrors) does not print
// it.
func unlessRefused[T any](ctx context.Context, nc *nats.Conn, subject string, op func(context.Context) (T, error)) (T, error) {
	defer probing(nc, subject)()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := op(ctx)
		done <- result{v, err}
	}()
	t := time.NewTicker(refusalPoll)
	defer t.Stop()
	for {
		select {
		case r := <-done:
			return r.v, r.err
		case <-t.C:
			if err := nc.LastError(); err != nil && refusedOn(err, subject) {
				cancel()
				<-done
				var zero T
				return zero, fmt.Errorf("%w: the server refused this credential a publication on %s: %w", ErrAuth, subject, err)
			}
		}
	}
}

// refusedOn reports whether err is the server's refusal of a publication
// on subject (or under it, for a subject ending in ".>").
func refusedOn(err error, subject string) bool {
	msg := err.Error()
	if !strings.Contains(msg, "Permissions Violation") {
		return false
	}
	if prefix, ok := strings.CutSuffix(subject, ">"); ok {
		return strings.Contains(msg, `"`+prefix)
	}
	return strings.Contains(msg, strconv.Quote(subject))
}

// refusalPoll is how often unlessRefused looks for a refusal.
const refusalPoll = 20 * time.Millisecond

// probes holds, for each connection, the subjects unlessRefused is trying
// on it (a *probeSet): a refusal of one of them is that call's answer.
// mdap asks the engine whether a credential may do a thing by trying it
// (the shared coordinator's request for a run stream of its own, on every
// run it journals, is refused by design), and nats.go's default handler
// printed each refusal on stderr ("nats: permissions violation: ...
// Publish to "mdap.engine.journal.<run>"").
var probes sync.Map

type probeSet struct {
	mu       sync.Mutex
	subjects map[string]int // subject → calls trying it
	gone     bool           // out of probes: take a new one
}

// refusalLinger is how long a subject stays expected after its
// unlessRefused returned: nats.go calls the error handler on a goroutine
// of its own, which may run after the call saw the refusal.
const refusalLinger = 2 * time.Second

// probing marks subject as tried on nc until the returned func is called
// and refusalLinger has passed.
func probing(nc *nats.Conn, subject string) (done func()) {
	for {
		v, _ := probes.LoadOrStore(nc, &probeSet{subjects: map[string]int{}})
		s := v.(*probeSet)
		s.mu.Lock()
		if s.gone {
			s.mu.Unlock()
			continue
		}
		s.subjects[subject]++
		s.mu.Unlock()
		return func() {
			time.AfterFunc(refusalLinger, func() {
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.subjects[subject]--; s.subjects[subject] <= 0 {
					delete(s.subjects, subject)
				}
				if len(s.subjects) == 0 {
					s.gone = true
					probes.CompareAndDelete(nc, s)
				}
			})
		}
	}
}

// probed reports whether err is nc's refusal of a subject unlessRefused
// is trying on it.
func probed(nc *nats.Conn, err error) bool {
	v, ok := probes.Load(nc)
	if !ok {
		return false
	}
	s := v.(*probeSet)
	s.mu.Lock()
	defer s.mu.Unlock()
	for subject := range s.subjects {
		if refusedOn(err, subject) {
			return true
		}
	}
	return false
}

// printAsyncErrors returns the error handler of Connect's connections:
// nats.go's default (the error and the connection's id, on w), but for a
// refusal that an unlessRefused call asked for.
func printAsyncErrors(w io.Writer) nats.ErrHandler {
	return func(nc *nats.Conn, sub *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) && probed(nc, err) {
			return
		}
		cid, _ := nc.GetClientID()
		if sub != nil {
			fmt.Fprintf(w, "%s on connection [%d] for subscription on %q\n", err, cid, sub.Subject)
			return
		}
		fmt.Fprintf(w, "%s on connection [%d]\n", err, cid)
	}
}
