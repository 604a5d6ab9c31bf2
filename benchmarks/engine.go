package benchmarks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tmc/langchaingo/llms"
)

// EngineResult is the engine suite's result: the NATS engine's cost per
// sample against core NATS request/reply carrying the same job on the
// same embedded server, and its wall time against drawing in process at
// a model latency.
type EngineResult struct {
	// Callers race at once, each a vote.Race of K samples (one wave) at
	// a time; Samples is each row's samples per run.
	Callers int `json:"callers"`
	K       int `json:"k"`
	Samples int `json:"samples"`
	// Rows: core request/reply, the engine (a wave a job) and the engine
	// one sample a job, at zero model latency.
	Rows []EngineRow `json:"rows"`
	// Latency is the model latency of the solve comparison; Disks its
	// Hanoi size.
	Latency time.Duration `json:"latency_ns"`
	Disks   int           `json:"disks"`
	// SolveRatio is the engine's wall time over in process's, for one
	// solve each, alternating, run by run: median, min and max.
	SolveRatio float64 `json:"solve_ratio"`
	SolveLo    float64 `json:"solve_ratio_lo"`
	SolveHi    float64 `json:"solve_ratio_hi"`
	// InProcWall and EngineWall are the solves' median wall times, in
	// seconds.
	InProcWall float64 `json:"inproc_wall_s"`
	EngineWall float64 `json:"engine_wall_s"`
	Runs       int     `json:"runs"`
}

// EngineRow is one transport's figures per sample at zero model latency:
// medians over the runs, and its wall ratio to core request/reply run by
// run (median, min, max).
type EngineRow struct {
	Transport     string  `json:"transport"`
	WallPerSample float64 `json:"wall_per_sample_us"`
	CPUPerSample  float64 `json:"cpu_per_sample_us"`
	Ratio         float64 `json:"ratio_to_core"`
	RatioLo       float64 `json:"ratio_lo"`
	RatioHi       float64 `json:"ratio_hi"`
	Jobs          int64   `json:"jobs,omitempty"`
}

func engineUnits(quick bool) int {
	if quick {
		return 2
	}
	return 3
}

const (
	engineCallers = 16
	engineK       = 3
	coreSubject   = "mdap.bench.core"
)

// engineBench is an embedded server with the engine's workers and core
// request/reply responders serving the sim.
type engineBench struct {
	srv     *cluster.Server
	drawer  *cluster.Drawer
	model   llms.Model // through the engine
	core    llms.Model // core request/reply
	close   []func()
	workers []*cluster.Worker
}

func (e *engineBench) release() {
	for i := len(e.close) - 1; i >= 0; i-- {
		e.close[i]()
	}
}

// startEngineBench starts the server, two engine workers and two core
// responders of inflight calls each, serving sim models of cfg.
func startEngineBench(ctx context.Context, cfg sim.Config, inflight int) (*engineBench, error) {
	e := &engineBench{}
	dir, err := os.MkdirTemp("", "mdap-bench-engine-")
	if err != nil {
		return nil, err
	}
	e.close = append(e.close, func() { _ = os.RemoveAll(dir) })
	fail := func(err error) (*engineBench, error) {
		e.release()
		return nil, fmt.Errorf("benchmarks: engine: %w", err)
	}
	e.srv, err = cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		return fail(err)
	}
	e.close = append(e.close, e.srv.Shutdown)
	conn := func(name string) (*nats.Conn, error) {
		nc, err := cluster.Connect(e.srv.ClientURL(), name)
		if err == nil {
			e.close = append(e.close, nc.Close)
		}
		return nc, err
	}
	wctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	e.close = append(e.close, func() { stop(); wg.Wait() })
	local, err := sim.New(hanoi.Oracle{}, cfg)
	if err != nil {
		return fail(err)
	}
	for i := range 2 {
		nc, err := conn(fmt.Sprintf("bench-worker-%d", i))
		if err != nil {
			return fail(err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			return fail(err)
		}
		m, err := sim.New(hanoi.Oracle{}, cfg)
		if err != nil {
			return fail(err)
		}
		w, err := cluster.NewWorker(ctx, js, m, cluster.WorkerConfig{Inflight: inflight})
		if err != nil {
			return fail(err)
		}
		e.workers = append(e.workers, w)
		wg.Go(func() { _ = w.Run(wctx) })
		// The core responder beside it: the same job and reply, JSON,
		// over core request/reply, inflight calls at once.
		cnc, err := conn(fmt.Sprintf("bench-core-%d", i))
		if err != nil {
			return fail(err)
		}
		ch := make(chan *nats.Msg, 1024)
		sub, err := cnc.ChanQueueSubscribe(coreSubject, "core", ch)
		if err != nil {
			return fail(err)
		}
		e.close = append(e.close, func() { _ = sub.Unsubscribe() })
		cm, err := sim.New(hanoi.Oracle{}, cfg)
		if err != nil {
			return fail(err)
		}
		for range inflight {
			wg.Go(func() {
				for {
					select {
					case <-wctx.Done():
						return
					case msg := <-ch:
						_ = msg.Respond(coreAnswer(wctx, cm, msg.Data))
					}
				}
			})
		}
	}
	nc, err := conn("bench-drawer")
	if err != nil {
		return fail(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fail(err)
	}
	e.drawer, err = cluster.NewDrawer(ctx, js, cluster.DrawerConfig{})
	if err != nil {
		return fail(err)
	}
	e.close = append(e.close, func() { _ = e.drawer.Close() })
	if e.model, err = e.drawer.Model(local.Identity()); err != nil {
		return fail(err)
	}
	cnc, err := conn("bench-core-caller")
	if err != nil {
		return fail(err)
	}
	e.core = coreModel{cnc}
	return e, nil
}

// coreModel is an llms.Model over core NATS request/reply: one request
// per sample, carrying the job a one-sample engine job would.
type coreModel struct{ nc *nats.Conn }

func (c coreModel) Call(ctx context.Context, p string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, p, opts...)
}

func (c coreModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	o := llms.CallOptions{}
	for _, fn := range opts {
		fn(&o)
	}
	id, _ := maker.SampleIDFrom(ctx)
	t := o.Temperature
	job := cluster.Job{Version: cluster.WireVersion, ID: "core", Route: "sim", ReplyTo: "-", Prompts: [][]cluster.Message{make([]cluster.Message, len(msgs))},
		Options: cluster.CallOptions{MaxTokens: o.MaxTokens}, Samples: []cluster.Sample{{Step: id.Step, Index: id.Index, Seed: o.Seed, Temperature: &t}}}
	for i, m := range msgs {
		job.Prompts[0][i] = cluster.Message(m)
	}
	data, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	msg, err := c.nc.RequestWithContext(ctx, coreSubject, data)
	if err != nil {
		return nil, err
	}
	var r cluster.Reply
	if err := json.Unmarshal(msg.Data, &r); err != nil || len(r.Samples) != 1 || len(r.Samples[0].Choices) == 0 {
		return nil, errors.Join(errors.New("core reply"), err)
	}
	return maker.TextResponse(r.Samples[0].Choices[0].Content, r.Samples[0].Choices[0].StopReason), nil
}

// coreAnswer is the core responder's work for one request.
func coreAnswer(ctx context.Context, m llms.Model, data []byte) []byte {
	var job cluster.Job
	if err := json.Unmarshal(data, &job); err != nil || len(job.Samples) != 1 || len(job.Prompts) != 1 {
		return nil
	}
	s := job.Samples[0]
	msgs := make([]llms.MessageContent, len(job.Prompts[0]))
	for i, mm := range job.Prompts[0] {
		msgs[i] = llms.MessageContent(mm)
	}
	opts := []llms.CallOption{llms.WithMaxTokens(job.Options.MaxTokens), llms.WithSeed(s.Seed)}
	if s.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*s.Temperature))
	}
	resp, err := m.GenerateContent(maker.WithSampleID(ctx, maker.SampleID{Step: s.Step, Index: s.Index}), msgs, opts...)
	r := cluster.Reply{Version: cluster.WireVersion, ID: job.ID, Samples: []cluster.SampleReply{{}}}
	if err != nil {
		r.Samples[0].Error = &cluster.ReplyError{Message: err.Error()}
	} else {
		for _, c := range resp.Choices {
			r.Samples[0].Choices = append(r.Samples[0].Choices, cluster.Choice{Content: c.Content, StopReason: c.StopReason})
		}
	}
	b, _ := json.Marshal(r)
	return b
}

// raceAll runs races races of K samples over m, callers at a time, each
// wave as vote.Race launches it (waves) or its samples one call after
// another (not waves), and returns the samples drawn.
func raceAll(ctx context.Context, m llms.Model, msgs []llms.MessageContent, races int, waves bool) (int64, error) {
	var next, samples atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	cfg := vote.Config{K: engineK, Parallel: engineK}
	if !waves {
		cfg.Parallel = 1
	}
	for range engineCallers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(races) && ctx.Err() == nil; i = next.Add(1) - 1 {
				_, err := vote.Race(ctx, cfg, func(ctx context.Context, j int) vote.Sample[string] {
					samples.Add(1)
					temp := 0.0
					if j > 0 {
						temp = 1
					}
					ctx = maker.WithSampleID(ctx, maker.SampleID{Step: int(i), Index: j})
					resp, err := m.GenerateContent(ctx, msgs, llms.WithTemperature(temp), llms.WithSeed(j+1), llms.WithMaxTokens(750))
					if err != nil {
						return vote.Sample[string]{Err: err}
					}
					h := fnv.New64a()
					_, _ = h.Write([]byte(resp.Choices[0].Content))
					return vote.Sample[string]{Value: resp.Choices[0].Content, Key: h.Sum64() | 1}
				})
				if err != nil && !errors.Is(err, vote.ErrUndecided) {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return samples.Load(), first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func runEngine(ctx context.Context, o Options, tick func()) (*EngineResult, error) {
	res := &EngineResult{Callers: engineCallers, K: engineK, Latency: 20 * time.Millisecond, Disks: 6, Runs: engineUnits(o.Quick)}
	races := 2000
	if o.Quick {
		races, res.Disks = 300, 4
	}
	cfg := sim.DefaultConfig()
	cfg.Seed = o.Seed
	e, err := startEngineBench(ctx, cfg, 8)
	if err != nil {
		return nil, err
	}
	defer e.release()
	task, err := hanoi.New(10)
	if err != nil {
		return nil, err
	}
	msgs := task.Messages()
	rows := []struct {
		name  string
		m     llms.Model
		waves bool
	}{
		{"core request/reply (one request a sample)", e.core, true},
		{"engine (a wave a job)", e.model, true},
		{"engine (one sample a job: --parallel 1)", e.model, false},
	}
	if _, err := raceAll(ctx, e.model, msgs, 64, true); err != nil { // warm up
		return nil, fmt.Errorf("benchmarks: engine: %w", err)
	}
	walls := make([][]float64, len(rows))
	cpus := make([][]float64, len(rows))
	ratios := make([][]float64, len(rows))
	jobs := make([]int64, len(rows))
	for range res.Runs {
		for i, r := range rows {
			j0 := e.drawer.Stats().Published
			cpu0, start := cpuTime(), time.Now()
			n, err := raceAll(ctx, r.m, msgs, races, r.waves)
			wall, cpu := time.Since(start), cpuTime()-cpu0
			if err != nil {
				return nil, fmt.Errorf("benchmarks: engine: %s: %w", r.name, err)
			}
			jobs[i] = e.drawer.Stats().Published - j0
			res.Samples = int(n)
			walls[i] = append(walls[i], float64(wall.Nanoseconds())/1e3/float64(n))
			cpus[i] = append(cpus[i], float64(cpu.Nanoseconds())/1e3/float64(n))
			ratios[i] = append(ratios[i], walls[i][len(walls[i])-1]/walls[0][len(walls[0])-1])
		}
		tick()
	}
	for i, r := range rows {
		lo, hi := minMax(ratios[i])
		res.Rows = append(res.Rows, EngineRow{Transport: r.name, WallPerSample: median(walls[i]), CPUPerSample: median(cpus[i]),
			Ratio: median(ratios[i]), RatioLo: lo, RatioHi: hi, Jobs: jobs[i]})
	}
	e.release()

	// The solve at a model latency: in process against the engine,
	// alternating.
	sr, err := engineSolves(ctx, cfg, res.Latency, res.Disks, res.Runs)
	if err != nil {
		return nil, err
	}
	res.SolveRatio, res.SolveLo, res.SolveHi = sr.ratio, sr.lo, sr.hi
	res.InProcWall, res.EngineWall = sr.inWall, sr.enWall
	return res, nil
}

// solveRatio is the engine's wall time over in process's for a solve at
// a model latency: the median of runs alternating run by run, its min
// and max, and the median walls in seconds.
type solveRatio struct {
	ratio, lo, hi, inWall, enWall float64
	runs                          int
}

// engineSolves solves a disks-disk Hanoi at k = engineK runs times in
// process and runs times over the NATS engine (an embedded server, two
// workers of 8 calls), alternating, with cfg's model at the given fixed
// latency.
func engineSolves(ctx context.Context, cfg sim.Config, latency time.Duration, disks, runs int) (solveRatio, error) {
	lcfg := cfg
	lcfg.Latency = sim.FixedLatency(latency)
	le, err := startEngineBench(ctx, lcfg, 8)
	if err != nil {
		return solveRatio{}, err
	}
	defer le.release()
	local, err := sim.New(hanoi.Oracle{}, lcfg)
	if err != nil {
		return solveRatio{}, err
	}
	solve := func(m llms.Model) (time.Duration, error) {
		t, err := hanoi.New(disks)
		if err != nil {
			return 0, err
		}
		rep, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: engineK}}, Model: m}).Solve(ctx, t)
		if err == nil && !t.Solved() {
			err = errors.New("not solved")
		}
		return rep.Wall, err
	}
	var solveRatios, inWalls, enWalls []float64
	for range runs {
		in, err := solve(local)
		if err != nil {
			return solveRatio{}, fmt.Errorf("benchmarks: engine: in process: %w", err)
		}
		en, err := solve(le.model)
		if err != nil {
			return solveRatio{}, fmt.Errorf("benchmarks: engine: solve: %w", err)
		}
		solveRatios = append(solveRatios, en.Seconds()/in.Seconds())
		inWalls, enWalls = append(inWalls, in.Seconds()), append(enWalls, en.Seconds())
	}
	out := solveRatio{ratio: median(solveRatios), inWall: median(inWalls), enWall: median(enWalls), runs: runs}
	out.lo, out.hi = minMax(solveRatios)
	return out, nil
}

func minMax(xs []float64) (lo, hi float64) {
	for i, x := range xs {
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
}

func writeEngine(b *strings.Builder, s *EngineResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## The NATS engine\n\n")
	w("One embedded server on loopback, two workers of 8 calls each, the simulated model at zero latency: %d callers at once, each racing %d samples at a time (a vote.Race of k=%d, %d samples a run). Core request/reply carries the same JSON job, one request a sample, to two responders of 8 calls each on the same server. Per sample: medians of %d runs; the ratio to core request/reply is run by run (median, min–max).\n\n",
		s.Callers, s.K, s.K, s.Samples, s.Runs)
	w("| transport | wall µs / sample | CPU µs / sample | × core (min–max) | jobs |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range s.Rows {
		w("| %s | %.1f | %.1f | ×%.2f (%.2f–%.2f) | %d |\n", r.Transport, r.WallPerSample, r.CPUPerSample, r.Ratio, r.RatioLo, r.RatioHi, r.Jobs)
	}
	w("\nHanoi, %d disks, k=%d, at %s model latency: the engine's wall time over in process's, one solve each, alternating: ×%.3f (%.3f–%.3f over %d runs; medians %.2f s in process, %.2f s over the engine).\n\n",
		s.Disks, s.K, s.Latency, s.SolveRatio, s.SolveLo, s.SolveHi, s.Runs, s.InProcWall, s.EngineWall)
}

func engineGoals(s *EngineResult) []Goal {
	g1 := "engine: wall per sample at most ×2 core request/reply at 16 callers"
	g2 := "engine: wall time at most ×1.1 in process at 20 ms model latency"
	if s == nil {
		return []Goal{{Goal: g1, Met: "not run", Why: "engine suite not run"}, {Goal: g2, Met: "not run", Why: "engine suite not run"}}
	}
	out := []Goal{}
	for _, r := range s.Rows {
		if strings.HasPrefix(r.Transport, "engine (a wave") {
			out = append(out, Goal{Goal: g1, Met: yes(r.Ratio <= 2), Measured: fmt.Sprintf("×%.2f (%.2f–%.2f over %d runs)", r.Ratio, r.RatioLo, r.RatioHi, s.Runs)})
		}
	}
	out = append(out, Goal{Goal: g2, Met: yes(s.SolveRatio <= 1.1), Measured: fmt.Sprintf("×%.3f (%.3f–%.3f over %d runs)", s.SolveRatio, s.SolveLo, s.SolveHi, s.Runs)})
	return out
}
