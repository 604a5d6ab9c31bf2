package ratelimit

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

func rateLimitErr(msg string) error {
	return openai.MapError(fmt.Errorf("API returned unexpected status code: 429: %s", msg))
}

func TestIsRateLimited(t *testing.T) {
	assert.True(t, IsRateLimited(rateLimitErr("Rate limit reached for requests")))
	assert.True(t, llms.IsRateLimitError(rateLimitErr("x")), "openai.MapError maps a 429")
	assert.True(t, IsRateLimited(fmt.Errorf("call: %w", models.ErrRateLimited)))
	assert.True(t, IsRateLimited(errors.New("HTTP 429 Too Many Requests")))
	assert.False(t, IsRateLimited(errors.New("connection refused")))
	assert.False(t, IsRateLimited(errors.New("used 1429 tokens")))
	assert.False(t, IsRateLimited(nil))
}

type named struct{ d time.Duration }

func (e named) Error() string             { return "slow down" }
func (e named) RetryAfter() time.Duration { return e.d }

func TestDelayAndParseDelay(t *testing.T) {
	for msg, want := range map[string]time.Duration{
		"Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.": 20 * time.Second,
		"Please try again in 1.5s":              1500 * time.Millisecond,
		"please try again in 6m0s":              6 * time.Minute,
		"Please try again in 120ms.":            120 * time.Millisecond,
		"retry after 3 seconds":                 3 * time.Second,
		"Retry-After: 7":                        7 * time.Second,
		"rate limited; retry_after=2.5":         2500 * time.Millisecond,
		"please wait 1 minute 30 seconds":       90 * time.Second,
		"try again in 2 minutes":                2 * time.Minute,
		"wait for it, then try again in 400ms.": 400 * time.Millisecond,
		"try again in 99999999 hours":           24 * time.Hour,
	} {
		d, ok := ParseDelay(msg)
		assert.True(t, ok, msg)
		assert.Equal(t, want, d, msg)
	}
	for _, msg := range []string{"Rate limit reached", "please wait", "try again later", "wait 3 requests", "retry in .5s", ""} {
		_, ok := ParseDelay(msg)
		assert.False(t, ok, msg)
	}
	d, ok := Delay(fmt.Errorf("wrapped: %w", named{d: 2 * time.Second}))
	assert.True(t, ok)
	assert.Equal(t, 2*time.Second, d)
	d, ok = Delay(rateLimitErr("Please try again in 250ms"))
	assert.True(t, ok, "the delay survives openai.MapError in the error's chain")
	assert.Equal(t, 250*time.Millisecond, d)
	_, ok = Delay(nil)
	assert.False(t, ok)
}

func FuzzParseDelay(f *testing.F) {
	for _, s := range []string{"try again in 1.5s", "retry after 20 seconds", "Retry-After: 3", "try again in 6m0s", "wait 1 minute 30 seconds", "retry in 9999999999999s", "try again in 1.00000000001s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4<<10 {
			return
		}
		d, ok := ParseDelay(s)
		if !ok {
			require.Zero(t, d)
			return
		}
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.LessOrEqual(t, d, 24*time.Hour)
	})
}

func TestDelayReadsAtMost32ErrorsOfTheChain(t *testing.T) {
	var err error = hidden{inner: errors.New("please try again in 2s")}
	for range 30 {
		err = hidden{inner: err}
	}
	d, ok := Delay(err)
	require.True(t, ok, "31 layers deep is read")
	assert.Equal(t, 2*time.Second, d)
	for range 5 {
		err = hidden{inner: err}
	}
	_, ok = Delay(err)
	assert.False(t, ok, "36 layers deep is past the bound")
}

// hidden wraps an error without showing its message.
type hidden struct{ inner error }

func (h hidden) Error() string { return "rate limited" }
func (h hidden) Unwrap() error { return h.inner }
