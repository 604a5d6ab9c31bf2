package models

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// limitServer is a loopback OpenAI-compatible server that records when
// each chat call arrived and the most calls it held at once. A call is
// answered when hold is closed (nil: at once).
type limitServer struct {
	*server
	hold      chan struct{}
	mu        sync.Mutex
	starts    []time.Time
	now, peak atomic.Int64
}

func newLimitServer(t *testing.T, hold chan struct{}) *limitServer {
	ls := &limitServer{hold: hold}
	ls.server = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		ls.mu.Lock()
		ls.starts = append(ls.starts, time.Now())
		ls.mu.Unlock()
		n := ls.now.Add(1)
		for p := ls.peak.Load(); n > p && !ls.peak.CompareAndSwap(p, n); p = ls.peak.Load() {
		}
		if ls.hold != nil {
			<-ls.hold
		} else {
			time.Sleep(20 * time.Millisecond) // long enough for calls to overlap
		}
		ls.now.Add(-1)
		writeJSON(w, 200, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`)
	})
	return ls
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
	a, b := newLimitServer(t, holdA), newLimitServer(t, nil)
	m, err := OpenAll([]string{
		"openai:a;base=" + a.URL + "/v1;inflight=1;rpm=600",
		"openai:b;inflight=3;base=" + b.URL + "/v1",
	}, Options{Timeout: 30 * time.Second})
	require.NoError(t, err)
	ms := m.(*maker.Ensemble).Members()

	ctx := context.Background()
	var ga errgroup.Group
	const nA, nB = 4, 12
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

	close(holdA)
	require.NoError(t, ga.Wait())
	assert.EqualValues(t, nA, a.chats.Load())
	assert.EqualValues(t, 1, a.peak.Load(), "A: inflight=1")
	a.mu.Lock()
	defer a.mu.Unlock()
	// rpm=600: calls start 100 ms apart. The server sees each a little
	// after it starts, by as much as a loaded machine delays it, so one
	// late arrival shortens the gap after it: each gap must be well over
	// what no limit would give (a millisecond or two on loopback), and
	// the calls after the held first (which waited for it, not for the
	// limit) must span (n-2) periods but for one arrival's delay.
	for i := 1; i < len(a.starts); i++ {
		assert.GreaterOrEqual(t, a.starts[i].Sub(a.starts[i-1]), 50*time.Millisecond, "A: call %d", i)
	}
	span := a.starts[len(a.starts)-1].Sub(a.starts[1])
	assert.GreaterOrEqual(t, span, time.Duration(len(a.starts)-2)*100*time.Millisecond-20*time.Millisecond, "A: calls 1 to %d", len(a.starts)-1)
}

// TestPerModelLimitsRPMOnly: rpm= alone spaces one model's calls (started
// at once) 60/rpm apart over the whole run.
func TestPerModelLimitsRPMOnly(t *testing.T) {
	cleanEnv(t)
	s := newLimitServer(t, nil)
	m, err := Open("openai:c;rpm=1200;base="+s.URL+"/v1", Options{})
	require.NoError(t, err)
	var g errgroup.Group
	const n = 6
	for range n {
		g.Go(func() error { _, err := ask(context.Background(), m); return err })
	}
	require.NoError(t, g.Wait())
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.starts, n)
	span := s.starts[n-1].Sub(s.starts[0])
	assert.GreaterOrEqual(t, span, time.Duration(n-1)*50*time.Millisecond-20*time.Millisecond, "rpm=1200: %d calls span at least %d × 50 ms", n, n-1)
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
		_, err := Open(spec, Options{Sim: nil})
		assert.ErrorIs(t, err, ErrSpec, spec)
		assert.ErrorContains(t, err, want, spec)
	}
	_, o, err := SplitEndpoint("openai:a;rpm=90.5;inflight=7", Options{})
	require.NoError(t, err)
	assert.Equal(t, 90.5, o.ModelRPM)
	assert.Equal(t, 7, o.ModelInFlight)
}
