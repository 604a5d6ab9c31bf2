package vote

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, Config{K: 3, Parallel: 3, MaxSamples: 300, MaxErrors: 10,
		Backoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second}, c)
	c, err = Config{K: 5, Backoff: 10 * time.Second}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, 5, c.Parallel)
	assert.Equal(t, 500, c.MaxSamples)
	assert.Equal(t, 10*time.Second, c.MaxBackoff, "cap raised to the base")
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{K: -1}, {Parallel: -1}, {MaxSamples: -1},
		{MaxBackoff: -1},
		{K: 5, MaxSamples: 4},
		{K: 1 << 30}, {Parallel: 1 << 30},
		{K: MaxK + 1}, {Parallel: maxConfigParallel + 1}, {MaxSamples: MaxSamples + 1},
	} {
		_, err := cfg.WithDefaults()
		require.ErrorIs(t, err, ErrConfig, "%+v", cfg)
		called := false
		_, err = Race(context.Background(), cfg, func(context.Context, int) Sample[int] {
			called = true
			return Sample[int]{}
		})
		require.ErrorIs(t, err, ErrConfig, "%+v", cfg)
		require.False(t, called, "%+v: drew despite a bad config", cfg)
	}
	_, err := Race[int](context.Background(), Config{}, nil)
	require.ErrorIs(t, err, ErrConfig)
	// The limits themselves are accepted.
	for _, cfg := range []Config{{K: MaxK}, {Parallel: maxConfigParallel}, {MaxSamples: MaxSamples}} {
		_, err := cfg.WithDefaults()
		require.NoError(t, err, "%+v", cfg)
	}
}

// TestWithDefaultsIsIdempotent: whatever WithDefaults accepts, its output
// is accepted again and left unchanged, so a config that passes validation
// (for example on the command line) never fails later inside Race.
func TestWithDefaultsIsIdempotent(t *testing.T) {
	edges := func(limit int) []int {
		return []int{0, 1, 2, 3, 7, limit - 1, limit, limit + 1, limit/2 + 1, -1}
	}
	durations := []time.Duration{0, 1, time.Millisecond, DefaultBackoff, time.Hour, -1, NoBackoff, -time.Hour}
	rng := rand.New(rand.NewPCG(7, 8))
	pick := func(xs []int) int {
		if rng.IntN(4) == 0 {
			return rng.IntN(1 << 21)
		}
		return xs[rng.IntN(len(xs))]
	}
	accepted := 0
	check := func(c Config) {
		d, err := c.WithDefaults()
		if err != nil {
			require.ErrorIs(t, err, ErrConfig)
			return
		}
		accepted++
		d2, err := d.WithDefaults()
		require.NoError(t, err, "WithDefaults(%+v) = %+v is refused", c, d)
		require.Equal(t, d, d2, "not idempotent for %+v", c)
		// Every field is set, within its limit.
		require.True(t, d.K >= 1 && d.K <= MaxK, "%+v", d)
		require.True(t, d.Parallel >= 1 && d.Parallel <= maxConfigParallel, "%+v", d)
		require.True(t, d.MaxSamples >= d.K && d.MaxSamples <= MaxSamples, "%+v", d)
		require.True(t, d.Speculate >= 0 && d.Speculate <= maxConfigParallel, "%+v", d)
		require.True(t, d.MaxErrors > 0 || d.MaxErrors == NoErrors, "%+v", d)
		require.True(t, d.Backoff > 0 || d.Backoff == NoBackoff, "%+v", d)
		require.GreaterOrEqual(t, d.MaxBackoff, d.Backoff)
		require.Positive(t, d.MaxBackoff)
	}
	// The case that broke: a large K used to default Parallel above its cap
	// (K + Speculate, now that K is at most MaxK).
	check(Config{K: MaxK, Speculate: maxConfigParallel})
	for range 5000 {
		check(Config{
			K:          pick(edges(MaxK)),
			Parallel:   pick(edges(maxConfigParallel)),
			Speculate:  pick(edges(maxConfigParallel)),
			MaxSamples: pick(edges(MaxSamples)),
			MaxErrors:  pick(edges(1 << 20)),
			Backoff:    durations[rng.IntN(len(durations))],
			MaxBackoff: durations[rng.IntN(len(durations))],
		})
	}
	assert.Greater(t, accepted, 250, "the property was exercised")
	d, err := Config{K: MaxK, Speculate: maxConfigParallel}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, maxConfigParallel, d.Parallel, "the default Parallel is capped")
}

func TestNoBackoff(t *testing.T) {
	for _, b := range []time.Duration{NoBackoff, -time.Second} {
		c, err := Config{Backoff: b}.WithDefaults()
		require.NoError(t, err)
		assert.Equal(t, NoBackoff, c.Backoff, "any negative Backoff is NoBackoff")
		for _, streak := range []int{1, 2, 10, 1000} {
			assert.Zero(t, c.delay(streak), "streak %d", streak)
		}
	}
	c, err := Config{}.WithDefaults()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, c.delay(1), DefaultBackoff/2, "0 still means the default")

	// 30 failed draws in a row: with the default backoff the delays alone
	// would add up to more than a minute.
	start := time.Now()
	res, err := Race(context.Background(), Config{Parallel: 1, MaxErrors: 29, Backoff: NoBackoff},
		func(context.Context, int) Sample[int] { return Sample[int]{Err: errFlaky} })
	require.ErrorIs(t, err, ErrTooManyErrors)
	assert.Equal(t, 30, res.Errors)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestConfigErrorsNameTheField: a refusal says where it comes from and
// which field, so that a command maps it to its flag.
func TestConfigErrorsNameTheField(t *testing.T) {
	for cfg, want := range map[*Config]string{
		{K: -1}:                           "invalid configuration: vote.Config: K = -1: use 0 (the default) to 1000",
		{Parallel: maxConfigParallel + 1}: "invalid configuration: vote.Config: Parallel = 65537: use 0 (the default) to 65536",
		{Speculate: -2}:                   "invalid configuration: vote.Config: Speculate = -2: use 0 (the default) to 65536",
		{MaxSamples: MaxSamples + 1}:      "invalid configuration: vote.Config: MaxSamples = 16777217: use 0 (the default) to 16777216",
		{MaxBackoff: -1}:                  "invalid configuration: vote.Config: MaxBackoff = -1ns: use 0 (the default) or a positive duration",
		{K: 5, MaxSamples: 4}:             "invalid configuration: vote.Config: MaxSamples = 4: must be at least K (5), or no race could be won",
	} {
		_, err := cfg.WithDefaults()
		assert.EqualError(t, err, want)
		fe := fielderr.As(err)
		require.NotNil(t, fe, "%v", err)
		assert.Equal(t, "vote.Config", fe.Config)
	}
}

// TestNoErrorsToleratesNone: MaxErrors NoErrors (or any negative) ends
// the race at its first failed draw, with ErrTooManyErrors and a budget of
// 0 in the message; 0 keeps the default of 10; WithDefaults keeps
// NoErrors and is idempotent on it.
func TestNoErrorsToleratesNone(t *testing.T) {
	failing := func(_ context.Context, i int) Sample[int] {
		if i == 1 {
			return Sample[int]{Err: errors.New("provider down")}
		}
		return Sample[int]{Value: 1, Key: 1}
	}
	for _, max := range []int{NoErrors, -5} {
		res, err := Race(context.Background(), Config{K: 3, Parallel: 1, MaxErrors: max}, failing)
		require.ErrorIs(t, err, ErrTooManyErrors, "MaxErrors %d", max)
		assert.Equal(t, 1, res.Errors)
		assert.Contains(t, err.Error(), "at most 0 allowed", "MaxErrors %d: %v", max, err)
	}
	res, err := Race(context.Background(), Config{K: 3, Parallel: 1}, failing)
	require.NoError(t, err, "0 is the default budget of 10")
	assert.Equal(t, 1, res.Errors)
	c, err := Config{MaxErrors: -7}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, NoErrors, c.MaxErrors)
	c2, err := c.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, c, c2)
}
