package vote

import (
	"fmt"
	"time"
)

// Defaults that a zero Config field takes. See Config.
const (
	DefaultK           = 3   // the paper's margin
	DefaultSamplesPerK = 100 // MaxSamples defaults to DefaultSamplesPerK * K
	DefaultMaxErrors   = 10
	DefaultBackoff     = 100 * time.Millisecond
	DefaultMaxBackoff  = 5 * time.Second
)

// Upper bounds on Config fields, against typos and overflow.
const (
	maxConfigK          = 1 << 20
	maxConfigParallel   = 1 << 16
	maxConfigMaxSamples = 1 << 30
)

// Config sets a race's margin, parallelism and budgets. The zero value is
// the paper's setting: every zero field takes its default, given below.
// Negative fields are an error wrapping ErrConfig.
type Config struct {
	// K is the margin: the first key with K more votes than every other
	// key wins. Default DefaultK (3). K = 1 is "first valid vote wins".
	K int
	// Parallel is the most samples in flight at once. Default K, so that
	// a unanimous race decides in one round trip. Parallel = 1 is the
	// paper's sequential rule: one sample at a time.
	Parallel int
	// MaxSamples bounds the valid plus red-flagged samples: when that many
	// are tallied without a winner, Race fails with ErrUndecided. Failed
	// draws do not count here (see MaxErrors). Default DefaultSamplesPerK
	// * K; it must be at least K.
	MaxSamples int
	// MaxErrors is the number of failed draws tolerated: one more ends
	// the race with ErrTooManyErrors. Default DefaultMaxErrors (10).
	MaxErrors int
	// Backoff is the base delay before the next launch after a failed
	// draw; it doubles with each failure in a row, up to MaxBackoff, and
	// is jittered uniformly into [d/2, d]. A successful draw resets it.
	// Jitter comes from math/rand/v2 and only moves launches in time,
	// never changes a result. Default DefaultBackoff (100ms); set 1ns for
	// practically none.
	Backoff time.Duration
	// MaxBackoff caps the delay. Default DefaultMaxBackoff (5s); a cap
	// below Backoff is raised to Backoff.
	MaxBackoff time.Duration
}

// WithDefaults returns c with every zero field set to its default. It fails
// with an error wrapping ErrConfig if a field is negative or absurdly large,
// or if MaxSamples is below K (no race could then be won).
func (c Config) WithDefaults() (Config, error) {
	switch {
	case c.K < 0, c.Parallel < 0, c.MaxSamples < 0, c.MaxErrors < 0, c.Backoff < 0, c.MaxBackoff < 0:
		return c, fmt.Errorf("%w: negative field in %+v", ErrConfig, c)
	case c.K > maxConfigK, c.Parallel > maxConfigParallel, c.MaxSamples > maxConfigMaxSamples:
		return c, fmt.Errorf("%w: K, Parallel or MaxSamples too large in %+v", ErrConfig, c)
	}
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Parallel == 0 {
		c.Parallel = c.K
	}
	if c.MaxSamples == 0 {
		c.MaxSamples = DefaultSamplesPerK * c.K
	}
	if c.MaxErrors == 0 {
		c.MaxErrors = DefaultMaxErrors
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	c.MaxBackoff = max(c.MaxBackoff, c.Backoff)
	if c.MaxSamples < c.K {
		return c, fmt.Errorf("%w: MaxSamples %d cannot hold a lead of K = %d", ErrConfig, c.MaxSamples, c.K)
	}
	return c, nil
}
