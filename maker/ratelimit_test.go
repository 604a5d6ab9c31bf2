package maker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// limitedOnce answers its first call with a rate limit naming delay, then
// passes every call to inner, remembering when each call came.
type limitedOnce struct {
	inner llms.Model
	delay any
	mu    sync.Mutex
	times []time.Time
}

func (m *limitedOnce) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	m.mu.Lock()
	m.times = append(m.times, time.Now())
	first := len(m.times) == 1
	m.mu.Unlock()
	if first {
		return nil, llms.NewError(llms.ErrCodeRateLimit, "test", "429 too many requests").WithDetail("retry_after", m.delay)
	}
	return m.inner.GenerateContent(ctx, msgs, opts...)
}

func (m *limitedOnce) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// TestRateLimitDelayIsWaited measures the wait RELIABILITY.md promises:
// a sample refused for rate waits the delay the provider named before it
// counts as failed, so the next try comes no sooner. Only the lower bound
// is asserted (a loaded machine makes waits longer, never shorter).
// testing/synctest cannot run the solver: vote's reused draw goroutines
// wait on a channel made outside any bubble. (Checked by removing the
// microagent's wait: the gap falls to the vote's 1 ms backoff and the
// test fails.)
func TestRateLimitDelayIsWaited(t *testing.T) {
	for _, c := range []struct {
		name  string
		delay any
		want  time.Duration
	}{
		{"a duration", 300 * time.Millisecond, 300 * time.Millisecond},
		{"seconds as a header says them", "0.4", 400 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &limitedOnce{inner: &scripted{reply: noisy}, delay: c.delay}
			s := &Solver{Config: Config{Vote: vote.Config{K: 1, Parallel: 1, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}}, Model: m}
			rep, err := s.Solve(context.Background(), &counter{target: 1})
			require.NoError(t, err)
			assert.Equal(t, 1, rep.Errors, "the refused sample counts as failed")
			require.GreaterOrEqual(t, len(m.times), 2)
			assert.GreaterOrEqual(t, m.times[1].Sub(m.times[0]), c.want, "the next try waited the named delay")
		})
	}
}

// TestRetryWaitIsCapped: a sample waits at most MaxRetryAfter, however
// long the provider asks for; RetryAfter reports the delay uncapped.
func TestRetryWaitIsCapped(t *testing.T) {
	err := llms.NewError(llms.ErrCodeRateLimit, "test", "429").WithDetail("retry_after", time.Hour)
	d, ok := RetryAfter(err)
	require.True(t, ok)
	assert.Equal(t, time.Hour, d)
	w, ok := retryWait(err)
	require.True(t, ok)
	assert.Equal(t, MaxRetryAfter, w)
	w, ok = retryWait(llms.NewError(llms.ErrCodeRateLimit, "test", "429").WithDetail("retry_after", 2*time.Second))
	require.True(t, ok)
	assert.Equal(t, 2*time.Second, w)
	_, ok = retryWait(context.DeadlineExceeded)
	assert.False(t, ok)
}
