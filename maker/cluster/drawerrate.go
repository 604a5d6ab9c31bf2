package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
	"golang.org/x/time/rate"
)

// The rate of new Drawers. Each Drawer the engine's agent makes rewrites
// RepliesStream's subjects (JetStream writes a stream's subject list
// whole) and its Close rewrites them again and purges; the Drawer quota
// bounds how many one identity holds at once, not how often it opens and
// closes them. A run key churning Drawers as fast as it might (8 at a
// time, each closed 150 ms after it opened) slowed another run on the
// engine from 0.35 to 1 s undisturbed to 7 to 26 s here (about 500 stream
// updates in 15 s), and to over a minute in a review on a loaded machine. So the agent also bounds how often one identity has a
// new Drawer made: a token bucket per identity, of its quota's size (an
// honest run key starting its quota of coordinators at once waits for
// none) refilled one every DrawerEvery. A Drawer already served (a
// coordinator asking again after a reconnection) and one adopted cost
// nothing, as for the quota. A refusal names the rate and the wait; the
// Drawer waits that long and asks again (askReplies), so an honest
// coordinator opening Drawers faster than the rate is slowed, not failed.

// DefaultDrawerEvery is how often one coordinator identity may have the
// engine make a new Drawer, past a burst of its quota, when
// ProvisionConfig.DrawerEvery is 0: a coordinator process opens one as it
// starts, so a second per identity covers any honest pace.
const DefaultDrawerEvery = time.Second

// drawerRateWait bounds how long a new Drawer waits out the engine's rate
// of new Drawers, in all, before NewDrawer fails naming it.
const drawerRateWait = 30 * time.Second

// drawerRates is an agent's buckets of new Drawers, one per identity.
type drawerRates struct {
	mu sync.Mutex
	by map[string]*rate.Limiter
}

// take spends one new Drawer of identity by, in a bucket of burst
// refilled one every every; if it has none, it spends nothing and returns
// how long until it will have one. A nil r has no bound.
func (r *drawerRates) take(by string, every time.Duration, burst int) time.Duration {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.by == nil {
		r.by = map[string]*rate.Limiter{}
	}
	// A full bucket is what a new one would be: forget those, so that
	// the map holds only identities that opened a Drawer lately.
	if len(r.by) >= 1024 {
		for k, l := range r.by {
			if l.TokensAt(now) >= float64(l.Burst()) {
				delete(r.by, k)
			}
		}
	}
	l := r.by[by]
	if l == nil {
		l = rate.NewLimiter(rate.Every(every), burst)
		r.by[by] = l
	}
	res := l.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d
	}
	return 0
}

// errDrawerRate is the refusal of a new Drawer of identity by past the
// engine's rate (cfg's): it names the rate and the wait, which the agent
// also sends apart (agentResponse.RetryIn).
func errDrawerRate(by string, cfg ProvisionConfig, in time.Duration) error {
	return &retryLater{wait: in, err: fmt.Errorf("%w: coordinator identity %s opens Drawers faster than the engine makes them (a burst of its quota, %d, then one every %s: maker nats --drawer-every, ProvisionConfig.DrawerEvery); ask again in %s, or open fewer Drawers: a coordinator process needs one",
		ErrEngine, truncate(by, 12), cfg.drawerQuota(), cfg.drawerEvery(), in.Round(time.Millisecond))}
}

// retryLater is a refusal that passes after wait.
type retryLater struct {
	wait time.Duration
	err  error
}

func (e *retryLater) Error() string { return e.err.Error() }
func (e *retryLater) Unwrap() error { return e.err }

// askReplies asks the engine's agent for this Drawer's reply consumer
// (mdap.engine.replies.<key>), and while the agent refuses it for the
// rate of new Drawers, waits the time the refusal names and asks again,
// for up to drawerRateWait in all; then the refusal is the error.
func (d *Drawer) askReplies(ctx context.Context) error {
	kind := "replies." + replyIdentity(d.nc.Opts.InboxPrefix, "")
	until := time.Now().Add(drawerRateWait)
	for {
		err := askAgent(ctx, d.nc, kind, agentRequest{Name: d.id})
		var later *retryLater
		if !errors.As(err, &later) || time.Now().Add(later.wait).After(until) {
			return err
		}
		d.log.Info("the engine makes new Drawers at its rate: asking again", "in", later.wait)
		if werr := wait.Sleep(ctx, later.wait); werr != nil {
			return err
		}
	}
}
