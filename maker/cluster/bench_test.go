package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// drawN draws n samples of msgs through m, conc at a time, each with its
// own sample identity, and returns the time taken.
func drawN(b *testing.B, m llms.Model, msgs []llms.MessageContent, n, conc int) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				ctx := maker.WithSampleID(context.Background(), maker.SampleID{Step: int(i), Index: 0})
				if _, err := m.GenerateContent(ctx, msgs, llms.WithMaxTokens(750)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkEngine measures samples drawn through the engine (an embedded
// server on loopback, two workers with 8 calls in flight each, 16
// concurrent callers) against the same samples drawn in process. It
// reports both rates and their ratio (x-inproc: the time of a sample
// through the engine over its time in process): with no model latency
// the ratio is the engine's whole per-sample overhead; with a model's
// latency it shows how much of it remains.
func BenchmarkEngine(b *testing.B) {
	for _, lat := range []time.Duration{0, 2 * time.Millisecond, 20 * time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%s", lat), func(b *testing.B) {
			c := sim.DefaultConfig()
			c.Latency = sim.FixedLatency(lat)
			newModel := func() *sim.Model {
				m, err := sim.New(hanoi.Oracle{}, c)
				require.NoError(b, err)
				return m
			}
			srv := startServer(b)
			for range 2 {
				_, wjs := connect(b, srv.ClientURL())
				runWorker(b, newWorker(b, wjs, newModel(), cluster.WorkerConfig{Inflight: 8}))
			}
			_, js := connect(b, srv.ClientURL())
			d := newDrawer(b, js, cluster.DrawerConfig{})
			local := newModel()
			remote, err := d.Model(local.Identity())
			require.NoError(b, err)
			task, err := hanoi.New(10)
			require.NoError(b, err)
			msgs := task.Messages()
			drawN(b, remote, msgs, 64, 16) // warm up

			// In-process and engine draws alternate in rounds, so that a
			// change of the machine's load weighs on both alike.
			var inproc, engine time.Duration
			b.ResetTimer()
			for r := range 4 {
				n := b.N/4 + b.N%4*(r/3)
				b.StopTimer()
				inproc += drawN(b, local, msgs, n, 16)
				b.StartTimer()
				engine += drawN(b, remote, msgs, n, 16)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/engine.Seconds(), "samples/s")
			b.ReportMetric(float64(b.N)/inproc.Seconds(), "inproc-samples/s")
			b.ReportMetric(engine.Seconds()/inproc.Seconds(), "x-inproc")
		})
	}
}

// BenchmarkSolveOverEngine is one 6-disk Towers of Hanoi run (63 voted
// steps, k = 3) with its samples drawn by three workers, against the same
// run in process: x-inproc is the run's time over the engine over its time
// in process.
func BenchmarkSolveOverEngine(b *testing.B) {
	srv := startServer(b)
	solveOverEngine(b, func() jetstream.JetStream {
		_, js := connect(b, srv.ClientURL())
		return js
	}, func() jetstream.JetStream {
		_, js := connect(b, srv.ClientURL())
		return js
	})
}

// BenchmarkSolveOverRolesEngine is BenchmarkSolveOverEngine on an engine
// with roles (maker nats's default): workers and the coordinator in the
// clients' account, each of their requests crossing an import into the
// engine's (accounts.go), each job through the engine's agent.
func BenchmarkSolveOverRolesEngine(b *testing.B) {
	srv, dir := startRoleServer(b)
	var n atomic.Int64
	solveOverEngine(b, func() jetstream.JetStream {
		seed, err := cluster.AddWorker(dir, fmt.Sprint("w", n.Add(1)))
		require.NoError(b, err)
		keys, _, err := cluster.EnsureCredentials(dir)
		require.NoError(b, err)
		_, err = srv.SetRoles(keys)
		require.NoError(b, err)
		_, js := connectAs(b, srv.ClientURL(), seed)
		return js
	}, func() jetstream.JetStream {
		_, js := connectAs(b, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleCoordinator))
		return js
	})
}

// solveOverEngine runs BenchmarkSolveOverEngine with three workers and a
// coordinator connected by worker and coordinator.
func solveOverEngine(b *testing.B, worker, coordinator func() jetstream.JetStream) {
	c := sim.DefaultConfig()
	newModel := func() *sim.Model {
		m, err := sim.New(hanoi.Oracle{}, c)
		require.NoError(b, err)
		return m
	}
	for range 3 {
		runWorker(b, newWorker(b, worker(), newModel(), cluster.WorkerConfig{Inflight: 2}))
	}
	d := newDrawer(b, coordinator(), cluster.DrawerConfig{})
	local := newModel()
	remote, err := d.Model(local.Identity())
	require.NoError(b, err)
	solve := func(m llms.Model) time.Duration {
		task, err := hanoi.New(6)
		require.NoError(b, err)
		start := time.Now()
		_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: m}).Solve(context.Background(), task)
		require.NoError(b, err)
		return time.Since(start)
	}
	solve(remote) // warm up
	var inproc, engine time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		inproc += solve(local)
		b.StartTimer()
		engine += solve(remote)
	}
	b.StopTimer()
	b.ReportMetric(engine.Seconds()/inproc.Seconds(), "x-inproc")
	b.ReportMetric(float64(engine.Microseconds())/float64(b.N*63), "µs/step")
}
