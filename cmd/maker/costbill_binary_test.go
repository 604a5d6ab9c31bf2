package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// biller sits in front of a server and adds up what every completion it
// answers bills, from the response's usage at a price: the provider's own
// bill, whatever the client later does with the reply (a sample the vote
// no longer needs is billed all the same).
type biller struct {
	mu        sync.Mutex
	dollars   float64
	in, out   float64 // dollars per million tokens
	responses int
	inflight  atomic.Int64
	*httptest.Server
}

// settled waits until no request is in flight through b: a run that
// ended (stopped at its cap, cancelling its calls) may leave requests the
// server still answers and bills a moment later, which would count in
// the next run's share of the bill.
func (b *biller) settled(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.inflight.Load() > 0 {
		require.True(t, time.Now().Before(deadline), "requests still in flight through the biller")
		time.Sleep(10 * time.Millisecond)
	}
}

func newBiller(t *testing.T, target string, in, out float64) *biller {
	u, err := url.Parse(strings.TrimSuffix(target, "/v1"))
	require.NoError(t, err)
	b := &biller{in: in, out: out}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(r *http.Response) error {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var c struct {
			Usage struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if r.StatusCode == http.StatusOK && json.Unmarshal(body, &c) == nil {
			b.mu.Lock()
			b.dollars += (float64(c.Usage.Prompt)*b.in + float64(c.Usage.Completion)*b.out) / 1e6
			b.responses++
			b.mu.Unlock()
		}
		return nil
	}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.inflight.Add(1)
		defer b.inflight.Add(-1)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *biller) bill() (float64, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dollars, b.responses
}

// withinMaxTokens is a red-flag mix with no overlong replies. The cap
// holds for a provider that bills no more than max_tokens of output
// (docs/cost.md); the sim's overlong replies model one that does not, and
// can pass it by their excess (TestRunnerBudgetHoldsAcrossRuns, in
// maker/batch, bounds that). The tests of the cap against a server's bill
// leave them out.
var withinMaxTokens = sim.FlagMix{CutOff: 1, Malformed: 1}

// TestBinaryMaxCostHoldsOnTheServersBill: --max-cost is checked against
// what the server billed, not what the run reports: a proxy in front of
// serve-sim adds up the usage of every completion it answers (samples
// cancelled by the vote and replies that arrive after a step is decided
// included), and under a cap that stops the run, with k samples in flight
// at once and with several samples per request, that bill never passes
// the cap; a resume with a larger cap ends with the uninterrupted run's
// winners.
func TestBinaryMaxCostHoldsOnTheServersBill(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate, cfg.Flags = 11, 0.8, 0.05, withinMaxTokens
	cfg.Latency = sim.FixedLatency(3 * time.Millisecond)
	_, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	// The two ways of requesting, side by side: each run waits on its
	// samples' latency.
	for _, per := range []string{"1", "auto"} {
		t.Run("samples-per-call="+per, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			full := newBiller(t, base, 0.4, 1.6)
			args := []string{"hanoi", "--disks", "5", "--model", "openai:sim=0.4/1.6", "--json", "--progress", "off",
				"--k", "4", "--samples-per-call", per, "--max-tokens", "60"}
			whole := filepath.Join(dir, "whole-"+per+".jsonl")
			c := start(t, nil, append(args, "--base-url", full.URL+"/v1", "--journal", whole)...)
			require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
			want := c.summary(t)
			require.True(t, want.Solved)
			wholeBill, _ := full.bill()
			require.Positive(t, wholeBill)

			for _, frac := range []float64{0.15, 0.5, 0.85} {
				capUSD := wholeBill * frac
				b := newBiller(t, base, 0.4, 1.6)
				j := filepath.Join(dir, fmt.Sprintf("capped-%s-%v.jsonl", per, frac))
				c := start(t, nil, append(args, "--base-url", b.URL+"/v1", "--journal", j, "--max-cost", fmt.Sprint(capUSD))...)
				require.Equal(t, 1, c.wait(t, 2*time.Minute), c.stderr.String())
				billed, n := b.bill()
				assert.Positive(t, n)
				assert.LessOrEqual(t, billed, capUSD, "--samples-per-call %s, cap %.6f: the server billed %.6f", per, capUSD, billed)

				c = start(t, nil, append(args, "--base-url", b.URL+"/v1", "--journal", j, "--resume", "--max-cost", fmt.Sprint(wholeBill*3))...)
				require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
				assert.True(t, c.summary(t).Solved)
				assert.Equal(t, decided(t, whole), decided(t, j), "--samples-per-call %s, cap %.6f: the uninterrupted run's winners, keys and votes", per, capUSD)
			}
		})
	}
}
