package models_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/all"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// limitServer is a loopback OpenAI-compatible server that records when
// each chat call arrived and the most calls it held at once. A call is
// answered when hold is closed; with hold nil, once meet calls are in at
// once (0: no wait), then a little later, long enough for calls to
// overlap.
type limitServer struct {
	*server
	hold      chan struct{}
	meet      int64
	met       chan struct{} // closed when meet calls are in at once
	metOnce   sync.Once
	mu        sync.Mutex
	starts    []time.Time
	now, peak atomic.Int64
}

func newLimitServer(t *testing.T, hold chan struct{}, meet int64) *limitServer {
	ls := &limitServer{hold: hold, meet: meet, met: make(chan struct{})}
	ls.server = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		ls.mu.Lock()
		ls.starts = append(ls.starts, time.Now())
		ls.mu.Unlock()
		n := ls.now.Add(1)
		for p := ls.peak.Load(); n > p && !ls.peak.CompareAndSwap(p, n); p = ls.peak.Load() {
		}
		if ls.meet > 0 && n >= ls.meet {
			ls.metOnce.Do(func() { close(ls.met) })
		}
		switch {
		case ls.hold != nil:
			<-ls.hold
		default:
			// The first calls wait for each other, so that the peak
			// reached is the limit's, not the machine's speed; a limit
			// below meet is seen as a lower peak after the wait.
			if ls.meet > 0 {
				select {
				case <-ls.met:
				case <-time.After(10 * time.Second):
				}
			}
			time.Sleep(20 * time.Millisecond) // long enough for calls to overlap
		}
		ls.now.Add(-1)
		writeJSON(w, 200, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`)
	})
	return ls
}

// atLeastPeriodsAfter asserts that the k-th call to arrive (from first
// on) arrived at least k-first periods after from. Each call
// arrives after the limiter let it go, by as much as a loaded machine
// delays it, so only a bound from an instant no later than the first
// of these calls' release holds whatever the delays: the k-th arrival
// is no earlier than the k-th release.
func atLeastPeriodsAfter(t *testing.T, starts []time.Time, first int, from time.Time, period time.Duration, what string) {
	t.Helper()
	for k := first; k < len(starts); k++ {
		want := time.Duration(k-first) * period
		assert.GreaterOrEqual(t, starts[k].Sub(from), want, "%s: call %d arrived %s after the start, not %s", what, k, starts[k].Sub(from), want)
	}
}

// TestPerModelLimits: two models of one ensemble on two servers, each
// with its own ;rpm= and ;inflight=. Model A (inflight=1, rpm=600) never
// has more than one call at its server and its calls start at least
// 60/600 s apart; model B (inflight=3, no rpm) reaches three at once and
// finishes all its calls while A's server still holds A's calls, so A's
// limits do not slow B. Removing the acquire in model.GenerateContent
// fails the peak and spacing checks.
func TestPerModelLimits(t *testing.T) {
	cleanEnv(t)
	holdA := make(chan struct{})
	a, b := newLimitServer(t, holdA, 0), newLimitServer(t, nil, 3)
	m, err := all.Open([]string{
		"openai:a;base=" + a.URL + "/v1;inflight=1;rpm=600",
		"openai:b;inflight=3;base=" + b.URL + "/v1",
	}, models.Options{Timeout: 30 * time.Second})
	require.NoError(t, err)
	ms := m.(*maker.Ensemble).Members()

	ctx := context.Background()
	var ga errgroup.Group
	const nA, nB = 4, 12
	begin := time.Now()
	for range nA {
		ga.Go(func() error { _, err := ask(ctx, ms[0]); return err })
	}
	var gb errgroup.Group
	for range nB {
		gb.Go(func() error { _, err := ask(ctx, ms[1]); return err })
	}
	require.NoError(t, gb.Wait(), "B finishes while A's server holds A's calls")
	assert.EqualValues(t, nB, b.chats.Load())
	assert.EqualValues(t, 3, b.peak.Load(), "B: inflight=3 reached and never passed")
	assert.EqualValues(t, 1, a.chats.Load(), "A: one call in flight, held")

	released := time.Now()
	close(holdA)
	require.NoError(t, ga.Wait())
	assert.EqualValues(t, nA, a.chats.Load())
	assert.EqualValues(t, 1, a.peak.Load(), "A: inflight=1")
	a.mu.Lock()
	defer a.mu.Unlock()
	// rpm=600: calls start 100 ms apart, from the first; the calls after
	// the held first could go only once it was released, so they start
	// 100 ms apart from then.
	const period = 100 * time.Millisecond
	atLeastPeriodsAfter(t, a.starts, 0, begin, period, "A, from the first")
	atLeastPeriodsAfter(t, a.starts, 1, released, period, "A, after the held call")
}

// TestPerModelLimitsRPMOnly: rpm= alone spaces one model's calls (started
// at once) 60/rpm apart over the whole run.
func TestPerModelLimitsRPMOnly(t *testing.T) {
	cleanEnv(t)
	s := newLimitServer(t, nil, 0)
	m, err := models.Open("openai:c;rpm=1200;base="+s.URL+"/v1", models.Options{})
	require.NoError(t, err)
	var g errgroup.Group
	const n = 6
	begin := time.Now()
	for range n {
		g.Go(func() error { _, err := ask(context.Background(), m); return err })
	}
	require.NoError(t, g.Wait())
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.starts, n)
	atLeastPeriodsAfter(t, s.starts, 0, begin, 50*time.Millisecond, "rpm=1200")
}

// TestPerModelLimitsBad: bad rpm= and inflight= values are refused naming
// the field; the sim model takes neither.
func TestPerModelLimitsBad(t *testing.T) {
	cleanEnv(t)
	for spec, want := range map[string]string{
		"openai:a;rpm=0":                 "rpm=0: use a positive number",
		"openai:a;rpm=-5":                "rpm=-5",
		"openai:a;rpm=fast":              "rpm=fast",
		"openai:a;rpm=NaN":               "rpm=NaN",
		"openai:a;rpm=Inf":               "rpm=Inf",
		"openai:a;inflight=0":            "inflight=0: use a whole number",
		"openai:a;inflight=2.5":          "inflight=2.5",
		"openai:a;inflight=1;inflight=2": "each once",
		"sim;rpm=5":                      "the simulated model",
	} {
		_, err := models.Open(spec, models.Options{Sim: nil})
		assert.ErrorIs(t, err, models.ErrSpec, spec)
		assert.ErrorContains(t, err, want, spec)
	}
	_, o, err := models.SplitEndpoint("openai:a;rpm=90.5;inflight=7", models.Options{})
	require.NoError(t, err)
	assert.Equal(t, 90.5, o.ModelRPM)
	assert.Equal(t, 7, o.ModelInFlight)
}
