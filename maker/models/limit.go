package models

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// Per-model limits, the ";rpm=N" and ";inflight=N" of a spec
// (Options.ModelRPM, Options.ModelInFlight): each model Open returns
// holds its own, so models of different servers in one ensemble,
// calibration or worker each stay within their own server's bounds and
// never wait for another's. maker/batch.Limits, shared by every model,
// apply on top.

// Bounds of a per-model limit, far above any provider's.
const (
	maxModelRPM      = 1e7
	maxModelInFlight = 1 << 16
)

// modelLimit bounds one model's calls: in flight (a weighted semaphore)
// and started per minute (a token bucket of one, so calls are evenly
// spaced). A nil *modelLimit limits nothing.
type modelLimit struct {
	rpm      float64
	inFlight int
	sem      *semaphore.Weighted
	lim      *rate.Limiter
}

// newModelLimit returns the limit of rpm and inFlight (each 0 for no
// bound), or nil when both are 0.
func newModelLimit(rpm float64, inFlight int) *modelLimit {
	if rpm <= 0 && inFlight <= 0 {
		return nil
	}
	l := &modelLimit{rpm: rpm, inFlight: inFlight}
	if inFlight > 0 {
		l.sem = semaphore.NewWeighted(int64(inFlight))
	}
	if rpm > 0 {
		l.lim = rate.NewLimiter(rate.Limit(rpm/60), 1)
	}
	return l
}

// acquire waits for a call's turn: a slot in flight, then a rate token.
// The caller calls release once, after its call. Errors: ctx's when it
// ends first (or when the rate token would come after ctx's deadline);
// nothing is held then.
func (l *modelLimit) acquire(ctx context.Context) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	if l.sem != nil {
		if err := l.sem.Acquire(ctx, 1); err != nil {
			return nil, err
		}
	}
	release = func() {
		if l.sem != nil {
			l.sem.Release(1)
		}
	}
	if l.lim != nil {
		if err := l.lim.Wait(ctx); err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}

// String names the limit as a spec writes it.
func (l *modelLimit) String() string {
	if l == nil {
		return "no limit"
	}
	var parts []string
	if l.rpm > 0 {
		parts = append(parts, fmt.Sprintf("rpm=%g", l.rpm))
	}
	if l.inFlight > 0 {
		parts = append(parts, fmt.Sprintf("inflight=%d", l.inFlight))
	}
	return strings.Join(parts, " ")
}
