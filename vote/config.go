package vote

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// Defaults that a zero Config field takes. See Config.
const (
	DefaultK           = 3   // the paper's margin
	DefaultSamplesPerK = 100 // MaxSamples defaults to DefaultSamplesPerK * K
	DefaultMaxErrors   = 10
	DefaultBackoff     = 100 * time.Millisecond
	DefaultMaxBackoff  = 5 * time.Second
)

// NoErrors, as Config.MaxErrors, tolerates no failed draw: the first one
// ends the race (0 there means DefaultMaxErrors). Any negative MaxErrors
// means the same; WithDefaults sets it to NoErrors.
const NoErrors = -1

// NoBackoff, as Config.Backoff, launches the next draw after a failed one
// without any delay. Any negative Backoff means the same; WithDefaults
// turns it into NoBackoff.
const NoBackoff time.Duration = -1

// MaxK and MaxSamples bound Config.K and Config.MaxSamples, against
// typos: a margin of 1000 already costs a thousand samples a step or
// more. They are the one source of every margin's and sample budget's
// bound (maker's AdaptiveK.Max, a tasks file's "k", the MCP server's
// MaxK, the maker command's --k).
const (
	MaxK       = 1000
	MaxSamples = 1 << 24
)

// MaxVoters bounds Config.MinVoters (and maker.Solver.MinVoters's
// answers, which are cut to it).
const MaxVoters = maxConfigParallel

// maxConfigParallel bounds Parallel, Speculate and MinVoters, as MaxK and
// MaxSamples bound theirs: WithDefaults refuses a field above its bound
// and never sets one above it.
const maxConfigParallel = 1 << 16

// Config sets a race's margin, parallelism and budgets. The zero value is
// the paper's setting: every zero field takes its default, given below.
// A negative field is an error wrapping ErrConfig, except Backoff, where
// negative means none (NoBackoff).
type Config struct {
	// K is the margin: the first key with K more valid votes than every
	// other key wins. Default DefaultK (3); at most MaxK. K = 1 is "first
	// valid vote wins".
	K int
	// Parallel is the most draws in flight at once; at most 2^16. Default
	// K + Speculate (capped at 2^16), so that a unanimous race decides in
	// one round trip. Parallel = 1 is the paper's sequential rule: one
	// sample at a time. A race never keeps more than K + Speculate draws
	// in flight (see Race), so a Parallel above that has no effect.
	Parallel int
	// Speculate is how many draws Race keeps in flight beyond the
	// leader's need (see Race's waves); default 0. A positive Speculate
	// trades samples for round trips: when a vote goes against the leader,
	// the draws that replace it are already running, which shortens races
	// against slow or heavy-tailed latency, and draws past the deciding
	// sample are cancelled (Tally.Cancelled > 0) but paid for. It never
	// changes the outcome (see Race). At most 2^16.
	Speculate int
	// MaxSamples bounds the valid plus red-flagged samples: when that many
	// are tallied without a winner, Race fails with ErrUndecided. Failed
	// draws do not count here (see MaxErrors). Default DefaultSamplesPerK
	// * K; it must be at least K and at most MaxSamples.
	MaxSamples int `flag:"max-samples" usage:"samples per decision before it fails (0: the vote's default, a multiple of k)"`
	// MaxErrors is the number of failed draws tolerated: one more ends
	// the race with ErrTooManyErrors. Default DefaultMaxErrors (10);
	// NoErrors (any negative value) tolerates none: the first failed draw
	// ends the race.
	MaxErrors int
	// Backoff is the base delay before the next launch after a failed
	// draw; it doubles with each failure in a row, up to MaxBackoff, and
	// is jittered uniformly into [d/2, d]. A successful draw resets it.
	// Jitter comes from math/rand/v2 and only moves launches in time,
	// never changes a result. Default DefaultBackoff (100ms); NoBackoff
	// (or any negative value) for none.
	Backoff time.Duration
	// MaxBackoff caps the delay. Default DefaultMaxBackoff (5s); a cap
	// below Backoff is raised to Backoff. Ignored with NoBackoff.
	MaxBackoff time.Duration
	// MinVoters is how many distinct voters (Sample.Voter) the winning
	// key's tallied votes must come from: a lead of K decides only then,
	// and until then the race draws on, within MaxSamples. Above 1, the
	// votes a key's top voter casts beyond one more than all its other
	// voters together do not count toward its lead, so a voter that
	// casts every vote for one wrong key decides nothing with one other
	// voter's agreeing error (voters that share a key's votes within one
	// of each other lose none). 0 (the default) and 1 mean any voter, and
	// every vote counts; at most 2^16.
	MinVoters int
	// Workers, if set, runs the race's draws on goroutines kept between
	// races (see Workers); nil starts a goroutine a draw. It changes no
	// result, only what a draw costs.
	Workers *Workers
}

// WithDefaults returns c with every zero field set to its default and a
// negative Backoff set to NoBackoff. It fails with an error wrapping
// ErrConfig, a field error naming the field ("vote.Config: K = -1: ...",
// a *maker.FieldError: find it with errors.As), if a field other than
// Backoff is negative, if K, Parallel, Speculate, MaxSamples or MinVoters
// is above its bound (see Config), or if MaxSamples is below K (no race
// could then be won).
//
// It is idempotent: for every c it accepts, WithDefaults accepts its result
// and returns it unchanged, so a Config checked once (on a command line, say)
// never fails later inside Race.
func (c Config) WithDefaults() (Config, error) {
	if err := c.checkBounds(); err != nil {
		return c, err
	}
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Parallel == 0 {
		c.Parallel = min(c.K+c.Speculate, maxConfigParallel)
	}
	if c.MaxSamples == 0 {
		c.MaxSamples = min(DefaultSamplesPerK*c.K, MaxSamples)
	}
	switch {
	case c.MaxErrors < 0:
		c.MaxErrors = NoErrors
	case c.MaxErrors == 0:
		c.MaxErrors = DefaultMaxErrors
	}
	switch {
	case c.Backoff < 0:
		c.Backoff = NoBackoff
	case c.Backoff == 0:
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	c.MaxBackoff = max(c.MaxBackoff, c.Backoff)
	if c.MaxSamples < c.K {
		return c, fielderr.New(configName, "MaxSamples", c.MaxSamples, fmt.Sprintf("must be at least K (%d), or no race could be won", c.K))
	}
	return c, nil
}

// configName is where Config's field errors come from.
const configName = "vote.Config"

// checkBounds refuses a negative field (but Backoff) or one above its
// bound, with a field error naming it.
func (c Config) checkBounds() error {
	for _, f := range []struct {
		name     string
		v, limit int
	}{
		{"K", c.K, MaxK}, {"Parallel", c.Parallel, maxConfigParallel}, {"Speculate", c.Speculate, maxConfigParallel},
		{"MaxSamples", c.MaxSamples, MaxSamples}, {"MaxErrors", max(c.MaxErrors, 0), math.MaxInt},
		{"MinVoters", c.MinVoters, maxConfigParallel},
	} {
		if f.v < 0 || f.v > f.limit {
			fix := fmt.Sprintf("use 0 (the default) to %d", f.limit)
			if f.limit == math.MaxInt {
				fix = "use 0 (the default) or more"
			}
			return fielderr.New(configName, f.name, f.v, fix)
		}
	}
	if c.MaxBackoff < 0 {
		return fielderr.New(configName, "MaxBackoff", c.MaxBackoff, "use 0 (the default) or a positive duration")
	}
	return nil
}

// delay is the backoff before the next launch after the streak-th failed
// draw in a row (streak >= 1), for a Config returned by WithDefaults: 0
// with NoBackoff, else Backoff doubled streak-1 times, capped at
// MaxBackoff, jittered uniformly into [d/2, d].
func (c Config) delay(streak int) time.Duration {
	if c.Backoff < 0 {
		return 0
	}
	d, maxDelay := c.Backoff, c.MaxBackoff
	for j := 1; j < streak && d < maxDelay; j++ {
		d += min(d, maxDelay-d) // doubled, at most maxDelay, never overflowing
	}
	d = min(d, maxDelay)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

// errorBudget is how many failed draws a race of c tolerates: MaxErrors,
// or none for NoErrors.
func (c Config) errorBudget() int { return max(c.MaxErrors, 0) }
