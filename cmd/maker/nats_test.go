package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNATSUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hanoi", "--journal", "nats:run"}, "give --nats URL too"},
		{[]string{"hanoi", "--nats", "http://127.0.0.1:4222"}, "want nats://HOST:PORT"},
		{[]string{"hanoi", "--nats", "nats://127.0.0.1:4222", "--journal", "nats:a.b"}, "run name"},
		{[]string{"hanoi", "--nats", "nats://127.0.0.1:4222", "--base-url", "http://127.0.0.1:1/v1"}, "--base-url applies to the workers' model"},
		{[]string{"hanoi", "--nats", "nats://127.0.0.1:4222", "--latency", "1ms"}, "--latency applies to the workers' model"},
		{[]string{"worker", "--model", "sim"}, "--nats URL"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--inflight", "0"}, "--inflight 0"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--ack-wait", "100ms"}, "--ack-wait 100ms: use at least 1s"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--ack-wait", "0"}, "--ack-wait 0s: use a positive value, or leave the flag out for 10s"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--inflight", "5000"}, "--inflight 5000: use 1 to 4096"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--grace", "-1s"}, "--grace -1s: use 0 or a positive duration"},
		{[]string{"nats", "--ack-wait", "0"}, "--ack-wait 0s: use a positive value, or leave the flag out for 10s"},
		{[]string{"nats", "--ack-wait", "2h"}, "--ack-wait 2h0m0s: use 1s to 1h"},
		{[]string{"nats", "--max-deliver", "0"}, "--max-deliver 0: use a positive value, or leave the flag out for 10"},
		{[]string{"nats", "--max-deliver", "1"}, "--max-deliver 1: use at least 2 (a dead worker's jobs must come back)"},
		{[]string{"nats", "--key-jobs", "0"}, "--key-jobs 0: use a positive value, or leave the flag out for 64"},
		{[]string{"nats", "--key-jobs", "-3"}, "--key-jobs -3"},
		{[]string{"nats", "--route-quota", "0"}, "--route-quota 0: use a positive value, or leave the flag out for 4"},
		{[]string{"nats", "--route-quota", "5000"}, "--route-quota 5000: use 1 to 16 routes a worker identity may add: at most the routes the engine serves (MaxRoutes, maker nats --max-routes)"},
		{[]string{"nats", "--max-routes", "8", "--route-quota", "9"}, "--route-quota 9: use 1 to 8"},
		{[]string{"nats", "provision", "--max-routes", "0"}, "--max-routes 0: use a positive value, or leave the flag out for 16"},
		{[]string{"nats", "--max-routes", "2000"}, "--max-routes 2000: use 1 to 1024"},
		{[]string{"nats", "--max-routes", "600"}, "--max-routes 600: serving 600 routes would leave one key less than one job a route"},
		{[]string{"nats", "provision", "--route-quota", "-1"}, "--route-quota -1"},
		{[]string{"nats", "--drawer-quota", "0"}, "--drawer-quota 0: use a positive value, or leave the flag out for 8"},
		{[]string{"nats", "provision", "--drawer-quota", "40"}, "--drawer-quota 40: use 1 to 32 Drawers a coordinator identity may have"},
		{[]string{"nats", "--drawer-every", "0"}, "--drawer-every 0s: use a positive value, or leave the flag out for 1s"},
		{[]string{"nats", "provision", "--drawer-every", "2h"}, "--drawer-every 2h0m0s: use 1ms to 1h between two new Drawers of one coordinator identity"},
		{[]string{"nats", "--max-drawers", "0"}, "--max-drawers 0: use a positive value, or leave the flag out for 32"},
		{[]string{"nats", "provision", "--max-drawers", "5000"}, "--max-drawers 5000: use 1 to 4096"},
		{[]string{"nats", "--max-drawers", "200"}, "--max-drawers 200: 200 Drawers would leave one worker less than one reply a Drawer"},
		{[]string{"nats", "--max-drawers", "4", "--drawer-quota", "5"}, "--drawer-quota 5: use 1 to 4 Drawers a coordinator identity may have"},
		{[]string{"nats", "--reply-keep", "0"}, "--reply-keep 0: use a positive value, or leave the flag out for 8"},
		{[]string{"nats", "provision", "--reply-keep", "-1"}, "--reply-keep -1: use a positive count"},
		{[]string{"nats", "--reply-bytes", "2000000"}, "--reply-bytes 2000000: use 1 to 1048576"},
		{[]string{"nats", "--job-bytes", "2000000"}, "--job-bytes 2000000: use at most 1048576"},
		{[]string{"nats", "provision", "--job-bytes", "0"}, "--job-bytes 0: use a positive value, or leave the flag out for 262144"},
		{[]string{"nats", "provision", "--replicas", "0"}, "--replicas 0: use a positive value, or leave the flag out for 1"},
		{[]string{"nats", "--replicas", "3"}, "--replicas 3: the embedded server is a single node"},
		{[]string{"nats", "--replicas", "0"}, "--replicas 0: use a positive value, or leave the flag out for 1"},
		{[]string{"nats", "provision", "--replicas", "6"}, "--replicas 6: use 1 to 5"},
		{[]string{"nats", "provision", "--ack-wait", "0"}, "--ack-wait 0s: use a positive value"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--log-level", "loud"}, `--log-level "loud": use debug, info, warn or error`},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--k", "3"}, "unknown flag: --k"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--model", "openai:x", "--seed", "2"}, "--seed applies to --model sim only"},
		{[]string{"nats", "--addr", "nowhere"}, "--addr"},
		{[]string{"nats", "--store", ""}, "--store"},
		{[]string{"nats", "--store", t.TempDir(), "--auth", "token", "--shared-coordinator"}, "--shared-coordinator true: with --auth token there are no role keys to share: leave it out, or use --auth roles"},
		{[]string{"nats", "--store", t.TempDir(), "--auth", "token", "--shared-worker"}, "--shared-worker true: with --auth token there are no role keys to share"},
		{[]string{"nats", "--store", t.TempDir(), "--auth", "token"}, "--auth token: set $" + cluster.TokenEnv + " to the token clients must send"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--identity", "a.b"}, `--identity "a.b": a worker identity is named 1 to 64 letters`},
	} {
		code, out, errOut := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Empty(t, out, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

// TestNATSBadPortWritesNothing: a port out of range is refused naming
// --addr before the credentials are made (it was refused by the server's
// start only, after the keys were written, naming no flag).
func TestNATSBadPortWritesNothing(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	code, _, errOut := cli(t, "nats", "--store", store, "--addr", "127.0.0.1:99999")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `maker: --addr "127.0.0.1:99999": the port must be 0 to 65535`)
	assert.NoDirExists(t, store, "refused before any key is written")
}

func TestNATSUnreachableFails(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"hanoi", "--disks", "3", "--nats", "nats://127.0.0.1:1"},
		{"worker", "--nats", "nats://127.0.0.1:1"},
	} {
		code, _, errOut := cli(t, args...)
		assert.Equal(t, 1, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, "maker nats", "%v: the message says how to start a server", args)
	}
}

// In one process: a server and a worker from the library, the CLI's
// coordinator with its journal on the engine, then a resume of the
// finished run.
func TestHanoiOverNATSWithJournalOnTheEngine(t *testing.T) {
	t.Parallel()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	nc, err := cluster.Connect(srv.ClientURL(), "worker")
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	c := sim.DefaultConfig()
	c.Seed = 1 // the flags' default
	model, err := sim.New(hanoi.Oracle{}, c)
	require.NoError(t, err)
	w, err := cluster.NewWorker(context.Background(), js, model, cluster.WorkerConfig{Inflight: 3})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, w.Run(ctx)) })
	defer func() { cancel(); wg.Wait() }()

	code, local := hanoiJSON(t, "--disks", "5")
	require.Equal(t, 0, code)
	args := []string{"--disks", "5", "--nats", srv.ClientURL(), "--journal", "nats:cli-run", "--timeout", "30s"}
	code, remote := hanoiJSON(t, args...)
	require.Equal(t, 0, code)
	assert.True(t, remote.Solved)
	assert.Equal(t, local.Valid, remote.Valid)
	assert.Equal(t, local.Flagged, remote.Flagged)
	assert.Positive(t, w.Stats().Served)

	code, _, errOut := cli(t, append([]string{"hanoi"}, args...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "journal already exists")
	start := time.Now()
	code, resumed := hanoiJSON(t, append(args, "--resume")...)
	require.Equal(t, 0, code)
	assert.Equal(t, 31, resumed.Resumed)
	assert.Less(t, time.Since(start), 5*time.Second, "a closed journal's lease is released at once")
}

// maker solve over NATS: two coordinators on one tasks file share its
// tasks through the queue; each task is solved once, and each
// coordinator ends with every result, the same as a local batch.
func TestSolveOverNATSTwoCoordinators(t *testing.T) {
	t.Parallel()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	c := sim.DefaultConfig()
	c.Seed = 1
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for range 2 {
		runSimWorker(ctx, t, &wg, srv.ClientURL(), c)
	}

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	var lines []string
	for i := range 6 {
		lines = append(lines, fmt.Sprintf(`{"id": "h%d", "hanoi": {"disks": %d}}`, i, 3+i%3))
	}
	lines = append(lines, `{"id": "bad", "hanoi": {"disks": 0}}`)
	require.NoError(t, os.WriteFile(tasks, []byte(strings.Join(lines, "\n")+"\n"), 0o644))

	code, _, errOut := cli(t, "solve", tasks, "--out", filepath.Join(dir, "local.jsonl"), "--progress", "off")
	require.Equal(t, 1, code, errOut) // the bad line
	local := readResults(t, filepath.Join(dir, "local.jsonl"))

	type outcome struct {
		code   int
		stderr string
		sum    solveSummary
	}
	outs := make([]outcome, 2)
	var cw sync.WaitGroup
	for i, name := range []string{"a.jsonl", "b.jsonl"} {
		cw.Go(func() {
			code, out, errOut := cli(t, "solve", tasks, "--out", filepath.Join(dir, name), "--nats", srv.ClientURL(), "--concurrency", "2", "--progress", "off", "--json")
			var sum solveSummary
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				errOut += "\nno JSON summary: " + out
			}
			outs[i] = outcome{code, errOut, sum}
		})
	}
	cw.Wait()
	here := 0
	re := regexp.MustCompile(`(\d+) tasks? solved here`)
	for i, name := range []string{"a.jsonl", "b.jsonl"} {
		assert.Equal(t, 1, outs[i].code, "the bad line fails the batch: %s", outs[i].stderr)
		assert.Equal(t, 7, outs[i].sum.Tasks)
		assert.Equal(t, 6, outs[i].sum.Solved)
		assert.Equal(t, 1, outs[i].sum.Invalid)
		assert.Zero(t, outs[i].sum.Skipped, "none was recorded by an earlier run")
		m := re.FindStringSubmatch(outs[i].stderr)
		require.NotNil(t, m, outs[i].stderr)
		n, _ := strconv.Atoi(m[1])
		here += n
		got := readResults(t, filepath.Join(dir, name))
		require.Len(t, got, 7, "every result in each coordinator's --out")
		for id, want := range local {
			g := got[id]
			assert.Equal(t, want.Status, g.Status, id)
			assert.Equal(t, want.Steps, g.Steps, id)
			assert.Equal(t, want.Valid, g.Valid, id)
			assert.Equal(t, want.Flagged, g.Flagged, id)
			assert.Equal(t, want.OutputTokens, g.OutputTokens, id)
		}
	}
	assert.Equal(t, 6, here, "each task solved once, by one of the coordinators")
}

func readResults(t *testing.T, path string) map[string]batch.Result {
	t.Helper()
	out := map[string]batch.Result{}
	for _, line := range strings.Split(strings.TrimSpace(string(mustRead(t, path))), "\n") {
		var r batch.Result
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		_, dup := out[r.Key()]
		require.False(t, dup, "a result twice: %s", line)
		out[r.Key()] = r
	}
	return out
}

// TestSpecOverNATSNeedsARealModel: docs/nats.md says the workers'
// simulated model "answers Towers of Hanoi prompts only: a spec task's
// replies come from its script, which a job does not carry", so "`maker
// run --nats --model sim` is refused; such a `solve` task is recorded
// invalid". The run exits 2 before it connects; in a batch over a worker,
// the spec task is invalid, naming why, and the Hanoi task beside it is
// solved.
func TestSpecOverNATSNeedsARealModel(t *testing.T) {
	t.Parallel()
	spec, err := filepath.Abs("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	code, out, errOut := cli(t, "run", spec, "--nats", "nats://127.0.0.1:1", "--model", "sim", "--progress", "off")
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "the workers' simulated model answers Towers of Hanoi only")
	assert.Empty(t, out)

	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	c := sim.DefaultConfig()
	c.Seed = 1
	runSimWorker(ctx, t, &wg, srv.ClientURL(), c)

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "h", "hanoi": {"disks": 3}}`+"\n"+`{"id": "s", "spec": "`+spec+`"}`+"\n"), 0o644))
	results := filepath.Join(dir, "results.jsonl")
	// A short --timeout and --max-errors: were the spec task sent to the
	// workers, it would fail in seconds rather than wait out the defaults.
	code, _, errOut = cli(t, "solve", tasks, "--out", results, "--nats", srv.ClientURL(), "--progress", "off", "--timeout", "3s", "--max-errors", "1")
	assert.Equal(t, 1, code, errOut)
	got := readResults(t, results)
	require.Len(t, got, 2, errOut)
	for _, r := range got {
		switch r.ID {
		case "h":
			assert.Equal(t, batch.StatusSolved, r.Status, "%+v", r)
		case "s":
			assert.Equal(t, batch.StatusInvalid, r.Status, "%+v", r)
			assert.Contains(t, r.Error, "answers Towers of Hanoi only", "%+v", r)
		}
	}
}

// TestSolveOverNATSStopsAtAFault: docs/batch.md says a fault outside a task
// ("a provider that failed every draw of a step ..., an engine outage with
// --nats") never makes it failed: "The batch stops, the stopped tasks get
// no line ..., the command exits 1 naming the task and the cause". Over
// --nats with no worker on the route every draw fails ("no worker serves"),
// so the batch stops with exit 1, naming the task and the cause, and
// records nothing; it used to hand the task back to the queue and take it
// again, every second, forever.
func TestSolveOverNATSStopsAtAFault(t *testing.T) {
	t.Parallel()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "h", "hanoi": {"disks": 2}}`+"\n"), 0o644))
	results := filepath.Join(dir, "results.jsonl")

	// Bounded, so that the old behaviour fails the test instead of hanging
	// it: the fault shows within seconds (cluster.DefaultNoWorker, 5 s).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr strings.Builder
	code := run(ctx, []string{"solve", tasks, "--out", results, "--nats", srv.ClientURL(), "--progress", "off", "--max-errors", "1"}, &stdout, &stderr)
	require.NoError(t, ctx.Err(), "the batch did not stop at the fault; stderr: %s", stderr.String())
	assert.Equal(t, 1, code, stderr.String())
	assert.Contains(t, stderr.String(), "no worker serves", "the cause")
	assert.Contains(t, stderr.String(), `"h"`, "the task")
	b, _ := os.ReadFile(results)
	assert.Empty(t, strings.TrimSpace(string(b)), "the stopped task gets no line")
	// The summary counts it, as a local batch's does: not "0 tasks".
	assert.Contains(t, stdout.String(), "1 task: 0 solved, 0 failed, 0 invalid, 1 unfinished", "the summary")
}

// runSimWorker runs an in-process worker of the simulated model c on url
// (three calls at a time) until ctx ends; wg waits for it.
func runSimWorker(ctx context.Context, t *testing.T, wg *sync.WaitGroup, url string, c sim.Config) {
	t.Helper()
	nc, err := cluster.Connect(url, "worker")
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	model, err := sim.New(hanoi.Oracle{}, c)
	require.NoError(t, err)
	w, err := cluster.NewWorker(ctx, js, model, cluster.WorkerConfig{Inflight: 3})
	require.NoError(t, err)
	wg.Go(func() { assert.NoError(t, w.Run(ctx)) })
}
