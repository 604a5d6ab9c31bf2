package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSolveLimitsCountRequestsOnTopOfPerModelLimits covers docs/cost.md:36-38
// ("--max-inflight and --rpm count requests (they wrap the model's calls)")
// and :180-181 ("--max-inflight and --rpm still bound every model together
// on top" of a spec's own ;inflight=). maker solve with --samples-per-call
// auto, --max-inflight 2 and a model allowed 3 calls of its own: the server
// never has more than 2 requests at once, requests of several samples are
// made (fewer requests than samples), and the shared limits count the
// requests the server saw, not the samples.
func TestSolveLimitsCountRequestsOnTopOfPerModelLimits(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 1, 0.995, 0
	cfg.Latency = sim.FixedLatency(2 * time.Millisecond) // so that requests overlap
	s, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	require.NoError(t, err)
	var now, peak, total atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		defer now.Add(-1)
		total.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(s.Close)

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 4}}
{"id": "b", "hanoi": {"disks": 4}}
{"id": "c", "hanoi": {"disks": 4}}
{"id": "d", "hanoi": {"disks": 4}}
`), 0o644))
	code, stdout, stderr := cli(t, "solve", tasks, "--out", filepath.Join(dir, "r.jsonl"),
		"--model", "openai:sim;base="+hs.URL+"/v1;inflight=3", "--samples-per-call", "auto", "--k", "4",
		"--concurrency", "4", "--max-inflight", "2", "--json", "--progress", "off")
	require.Equal(t, 0, code, stderr)
	var sum solveSummary
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Equal(t, 4, sum.Solved)
	assert.LessOrEqual(t, peak.Load(), int64(2), "--max-inflight 2 over the model's own inflight=3")
	assert.Equal(t, 2, int(peak.Load()), "the tasks did overlap")
	assert.Less(t, sum.Requests, sum.Samples, "requests of several samples were made")
	assert.Equal(t, total.Load(), int64(sum.Requests), "the summary counts the server's requests")
	require.NotNil(t, sum.Limits)
	assert.Equal(t, total.Load(), sum.Limits.Calls, "the shared limits counted requests, not samples")
}
