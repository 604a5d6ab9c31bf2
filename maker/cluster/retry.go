package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// isTransient reports whether a fetch error is worth retrying: a timeout,
// a lost connection that reconnects.
func isTransient(err error) bool {
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, jetstream.ErrNoHeartbeat)
}

// passing reports whether err is an engine's failure that passes: a
// request unanswered or timed out, a connection moving to another node.
// A server without JetStream, a refusal or a bad name is not.
func passing(err error) bool {
	return errors.Is(err, ErrEngine) && !errors.Is(err, ErrNoJetStream) && !errors.Is(err, ErrAuth) &&
		(isTransient(err) || errors.Is(err, jetstream.ErrNoStreamResponse))
}

// retryPassing runs op, and again every leaderRetryWait while it fails in
// a way that passes, starting tries for up to opTimeout (the last may run
// its attempt past it) or until ctx ends: a client that
// starts while a cluster elects leaders (a node just restarted), or whose
// connection moves to another node, gets through once that is over
// instead of failing on the first request that timed out. With attempt
// > 0 each try has that long: a request under a context with a deadline
// waits for the deadline (jetstream's own 5 s timeout is for a context
// without one), so one request lost in an election would take the whole
// of ctx. It returns op's last result.
func retryPassing[T any](ctx context.Context, attempt time.Duration, op func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(opTimeout)
	for {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if attempt > 0 {
			actx, cancel = context.WithTimeout(ctx, attempt)
		}
		v, err := op(actx)
		cancel()
		if err == nil || !passing(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return v, err
		}
		if err := wait.Sleep(ctx, leaderRetryWait); err != nil {
			return v, err
		}
	}
}

// setupAttempt is how long one try of a client's setup (its streams,
// consumers and buckets, a few requests) may take before it is made
// again (retryPassing): twice jetstream's own request timeout, for a
// loaded machine.
const setupAttempt = 10 * time.Second
