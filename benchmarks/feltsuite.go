package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tmc/langchaingo/llms"
	xrate "golang.org/x/time/rate"
)

// The goals suite's settings: issue #36's.
const (
	feltLatency       = 50 * time.Millisecond // the model latency of the wall-time goals
	feltEngineLatency = 20 * time.Millisecond // the engine's
	feltP             = 0.99
	feltK             = 3
	feltRPM           = 600
	feltTasks         = 1000 // the rate goal's batch
	feltWorkers       = 4
	feltInflight      = 4 // each worker's --inflight
	// maker solve's defaults, which the batch goals run with.
	solveConcurrency = 4
	solveMaxInFlight = 16
	solveRetries     = 3
)

// feltSize is the goals suite's sizes: the issue's, or --quick's.
type feltSize struct {
	wallSteps     int // steps of the wall-per-step run
	engineDisks   int
	engineRuns    int
	costSteps     int
	rateTasks     int
	workerTasks   int // tasks of the workers batch
	workerDisks   int
	workerRuns    int
	cpuDisks      int // the CPU and memory goal's large size (20)
	cpuRuns       int // runs at cpuDisks; the CPU figure is the least
	journalDisks  int
	journalRuns   int
	quickScaledTo string // what --quick scaled down, for the notes; "" at full size
}

func feltSizes(quick bool) feltSize {
	if quick {
		return feltSize{wallSteps: 40, engineDisks: 4, engineRuns: 2, costSteps: 24, rateTasks: 30,
			workerTasks: 8, workerDisks: 3, workerRuns: 1, cpuDisks: 16, cpuRuns: 2, journalDisks: 4, journalRuns: 2, quickScaledTo: "quick"}
	}
	return feltSize{wallSteps: 200, engineDisks: 6, engineRuns: 3, costSteps: 400, rateTasks: feltTasks,
		workerTasks: 16, workerDisks: 4, workerRuns: 2, cpuDisks: 20, cpuRuns: 1, journalDisks: 5, journalRuns: 3}
}

// feltSizing gives the suite's sizes; a test shrinks them below --quick's.
var feltSizing = feltSizes

// feltUnits: Hanoi CPU and memory, the journal, wall per step, the
// engine, cost, the rate, the workers.
func feltUnits() int { return 7 }

// runFelt measures issue #36's user-felt goals, each as a figure with its
// goal and its bar (see FeltGoal), in one run.
func runFelt(ctx context.Context, o Options, tick func()) (*FeltResult, error) {
	sz := feltSizing(o.Quick)
	res := &FeltResult{}
	add := func(rows ...FeltGoal) {
		for _, g := range rows {
			if o.Quick && g.quickBar != 0 {
				g.Note = joinNotes(g.Note, fmt.Sprintf("--quick bar %s (the full run's %s): a smaller run on a shared machine moves more", g.fmtFigure(g.quickBar), g.fmtFigure(g.Bar)))
				g.Bar = g.quickBar
			}
			g.quickBar = 0
			g.judge()
			res.Rows = append(res.Rows, g)
		}
	}
	// Memory first: nothing else of this suite has grown the heap yet.
	rows, err := feltHanoiCPU(ctx, o.Seed, sz)
	if err != nil {
		return nil, fmt.Errorf("hanoi: %w", err)
	}
	add(rows...)
	tick()
	rows, err = feltJournal(ctx, o.Seed, sz)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	add(rows...)
	tick()
	row, err := feltWallPerStep(ctx, o.Seed, sz)
	if err != nil {
		return nil, fmt.Errorf("wall per step: %w", err)
	}
	add(row)
	tick()
	row, err = feltEngine(ctx, o.Seed, sz)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	add(row)
	tick()
	rows, err = feltCost(ctx, o.Seed, sz)
	if err != nil {
		return nil, fmt.Errorf("cost: %w", err)
	}
	add(rows...)
	tick()
	rows, err = feltRate(ctx, o.Seed, sz)
	if err != nil {
		return nil, fmt.Errorf("rate: %w", err)
	}
	add(rows...)
	tick()
	rows, err = feltScaleOut(ctx, o.Seed, sz)
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	add(rows...)
	tick()
	return res, nil
}

// quickNote says what a --quick run measured instead of the goal's size.
func quickNote(sz feltSize, format string, a ...any) string {
	if sz.quickScaledTo == "" {
		return ""
	}
	return "--quick: " + fmt.Sprintf(format, a...)
}

func joinNotes(notes ...string) string {
	out := ""
	for _, n := range notes {
		if n == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += n
	}
	return out
}

// feltHanoiCPU: the CPU of a 20-disk Hanoi on the sim (no journal, no
// latency: the Monte Carlo workhorse), and its peak memory over a 12-disk
// run's.
func feltHanoiCPU(ctx context.Context, seed uint64, sz feltSize) ([]FeltGoal, error) {
	cfg := sim.DefaultConfig()
	cfg.Seed = seed
	small, err := scaleRun(ctx, cfg, 12, feltK, "", false)
	if err != nil {
		return nil, err
	}
	// The least CPU of sz.cpuRuns runs: getrusage counts the whole
	// process, and what ran before this suite (other suites' servers
	// shutting down, their garbage) lands in whichever run comes first
	// (CI39: 60.4 s at 16 disks, against 32.7 to 53.3 s in CI36 to CI40).
	var large ScaleRow
	for i := range max(sz.cpuRuns, 1) {
		r, err := scaleRun(ctx, cfg, sz.cpuDisks, feltK, "", false)
		if err != nil {
			return nil, err
		}
		if !r.Solved {
			return nil, errors.New("a Hanoi run was not solved")
		}
		if i == 0 || r.CPUPerSample*float64(r.Samples) < large.CPUPerSample*float64(large.Samples) {
			large = r
		}
	}
	if !small.Solved {
		return nil, errors.New("a Hanoi run was not solved")
	}
	cpu := large.CPUPerSample * float64(large.Samples) / 1e6
	steps20 := float64(1<<20 - 1)
	figure := cpu * steps20 / float64(large.Steps)
	// quickBar 60: --quick runs every suite in one process, and the
	// process's CPU (getrusage) then counts what the suites before this
	// one leave running: 43.0 s at 16 disks in CI's all-suite run against
	// 27.4 and 29.6 s with the goals suite alone, the same binary. A quick
	// figure catches a gross regression only; the full run's bar is 25 s.
	cpuRow := FeltGoal{Name: "20-disk Hanoi on the sim: CPU", Unit: "s", Judge: AtMost, Target: 20, Bar: 25, quickBar: 60, Figure: figure,
		Measured: fmt.Sprintf("%d steps, %d samples, %.1f µs CPU per sample (user + system, getrusage; the least of %d runs), %s wall, k = %d, no journal; load average %s just before",
			large.Steps, large.Samples, large.CPUPerSample, max(sz.cpuRuns, 1), large.Wall.Round(100*time.Millisecond), feltK, large.Load),
		Note: joinNotes(quickNote(sz, "a %d-disk run's CPU scaled by its steps to 20 disks' %d", sz.cpuDisks, 1<<20-1), "bar 25 s: CPU time moves with a shared machine's load less than wall time, but it moves")}
	memRow := FeltGoal{Name: fmt.Sprintf("memory at %d disks over 12", sz.cpuDisks), Unit: "×", Judge: AtMost, Target: 1.2, Bar: 1.3,
		Figure: large.PeakRSSMB / small.PeakRSSMB,
		Measured: fmt.Sprintf("peak RSS %.1f MB at %d disks, %.1f MB at 12 (VmHWM, reset before each run); peak live heap %.1f MB and %.1f MB",
			large.PeakRSSMB, sz.cpuDisks, small.PeakRSSMB, large.PeakHeapMB, small.PeakHeapMB),
		Note: joinNotes(quickNote(sz, "%d disks against 12; the goal is at 20", sz.cpuDisks), "bar ×1.3")}
	return []FeltGoal{cpuRow, memRow}, nil
}

// feltJournal: a journaled Hanoi's wall time over an unjournaled one's at
// 50 ms model latency, runs alternating; its CPU ratio beside it.
func feltJournal(ctx context.Context, seed uint64, sz feltSize) ([]FeltGoal, error) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Latency = seed, sim.FixedLatency(feltLatency)
	dir, err := os.MkdirTemp("", "mdap-bench-goals-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var walls, cpus []float64
	for i := range sz.journalRuns {
		with, err := scaleRun(ctx, cfg, sz.journalDisks, feltK, filepath.Join(dir, fmt.Sprintf("j-%d.jsonl", i)), false)
		if err != nil {
			return nil, err
		}
		without, err := scaleRun(ctx, cfg, sz.journalDisks, feltK, "", false)
		if err != nil {
			return nil, err
		}
		walls = append(walls, float64(with.Wall)/float64(without.Wall))
		cpus = append(cpus, with.CPUPerSample/without.CPUPerSample)
	}
	lo, hi := minMax(walls)
	steps := 1<<sz.journalDisks - 1
	wall := FeltGoal{Name: "journaled over unjournaled wall, 50 ms latency", Unit: "×", Judge: AtMost, Target: 1.01, Bar: 1.05, quickBar: 1.10, Figure: median(walls),
		Measured: fmt.Sprintf("median of %d alternating pairs of %d-disk Hanoi (%d steps, k = %d), run by run (%.3f–%.3f); the journal a signed file, synced in the background", sz.journalRuns, sz.journalDisks, steps, feltK, lo, hi),
		Note:     "bar ×1.05: timer and scheduling noise on a shared machine moves one pair by a few per cent"}
	clo, chi := minMax(cpus)
	cpu := FeltGoal{Name: "journaled over unjournaled CPU, 50 ms latency", Unit: "×", Judge: Info, Figure: median(cpus),
		Measured: fmt.Sprintf("the same pairs, CPU per sample (%.3f–%.3f)", clo, chi),
		Note:     "not a goal: signing and per-sample records raise it"}
	return []FeltGoal{wall, cpu}, nil
}

// roundCounter counts a step's launch rounds: calls of one step starting
// more than half a latency after its previous round began start a new one.
type roundCounter struct {
	llms.Model
	half   time.Duration
	mu     sync.Mutex
	start  map[int]time.Time
	rounds int
}

func (c *roundCounter) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if id, ok := maker.SampleIDFrom(ctx); ok {
		now := time.Now()
		c.mu.Lock()
		if t, seen := c.start[id.Step]; !seen || now.Sub(t) > c.half {
			c.start[id.Step] = now
			c.rounds++
		}
		c.mu.Unlock()
	}
	return c.Model.GenerateContent(ctx, msgs, opts...)
}

// feltWallPerStep: wall time per decided step over the model latency, at
// p 0.99, k 3, 50 ms, with the solver's defaults (Parallel = k).
func feltWallPerStep(ctx context.Context, seed uint64, sz feltSize) (FeltGoal, error) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.Latency = seed, feltP, sim.FixedLatency(feltLatency)
	m, err := sim.New(hanoi.Oracle{}, cfg)
	if err != nil {
		return FeltGoal{}, err
	}
	rc := &roundCounter{Model: m, half: feltLatency / 2, start: map[int]time.Time{}}
	task, err := hanoi.New(10)
	if err != nil {
		return FeltGoal{}, err
	}
	rep, err := (&maker.Solver{Model: rc, Config: maker.Config{Vote: vote.Config{K: feltK}, MaxSteps: sz.wallSteps}}).Solve(ctx, task)
	if err != nil && !errors.Is(err, maker.ErrStepLimit) {
		return FeltGoal{}, err
	}
	if rep.Steps == 0 {
		return FeltGoal{}, errors.New("no step decided")
	}
	perStep := rep.Wall.Seconds() / float64(rep.Steps) / feltLatency.Seconds()
	rounds := float64(rc.rounds) / float64(rep.Steps)
	g := FeltGoal{Name: "wall per decided step over model latency (p 0.99, k 3, 50 ms)", Unit: "×", Judge: AtMost, Target: 1.02, Bar: 1.10, quickBar: 1.15, Figure: perStep,
		Measured: fmt.Sprintf("%d steps of 10-disk Hanoi on the sim, solver defaults (Parallel = k, no speculation), %.3f samples a step; %.3f launch rounds a step (the figure with free orchestration), so orchestration adds %+.1f%%",
			rep.Steps, rep.SamplesPerStep(), rounds, 100*(perStep/rounds-1))}
	if perStep > g.Target && rounds > g.Target {
		g.Note = fmt.Sprintf("the rounds alone are over the goal: %.1f%% of steps need a second round (a wrong or red-flagged sample among the first k leaves the leader short of k); only speculation (vote.Config.Speculate) launches it sooner", 100*(rounds-1))
	}
	return g, nil
}

// feltEngine: the NATS engine's wall time over in process's at 20 ms.
func feltEngine(ctx context.Context, seed uint64, sz feltSize) (FeltGoal, error) {
	cfg := sim.DefaultConfig()
	cfg.Seed = seed
	sr, err := engineSolves(ctx, cfg, feltEngineLatency, sz.engineDisks, sz.engineRuns)
	if err != nil {
		return FeltGoal{}, err
	}
	return FeltGoal{Name: "NATS engine (embedded) over in-process wall, 20 ms latency", Unit: "×", Judge: AtMost, Target: 1.03, Bar: 1.10, quickBar: 1.25, Figure: sr.ratio,
		Measured: fmt.Sprintf("%d-disk Hanoi, k = %d, median of %d alternating pairs run by run (%.3f–%.3f; medians %.2f s in process, %.2f s over the engine: two workers of 8 calls on loopback)",
			sz.engineDisks, engineK, sr.runs, sr.lo, sr.hi, sr.inWall, sr.enWall)}, nil
}

// feltCost: dollars per decided step over the output the vote must buy,
// at 20 disks, samples per request and caching both on (the cheapest
// setting that keeps the paper's temperature rule), short and
// reasoning-length replies. Token counts are a function of the seed, so
// these figures do not move with the machine's load.
func feltCost(ctx context.Context, seed uint64, sz feltSize) ([]FeltGoal, error) {
	price, ok := models.BuiltinPrice("openai", "gpt-4.1-mini")
	if !ok {
		return nil, errors.New("no built-in price for gpt-4.1-mini")
	}
	const disks = 20
	k, err := laws.KMin(1<<disks-1, costP, costTarget)
	if err != nil {
		return nil, err
	}
	var st costStrategy
	for _, s := range costStrategies {
		if s.name == "both" {
			st = s
		}
	}
	var out []FeltGoal
	for _, reply := range []string{"short", "reasoning"} {
		row, err := costRun(ctx, seed, disks, k, sz.costSteps, reply, st, price)
		if err != nil {
			return nil, err
		}
		floor := outputDollarsPerStep(row, price)
		g := FeltGoal{Name: "dollars per decided step over its floor, " + reply + " replies", Unit: "×", Judge: AtMost, Target: 1.05,
			Figure: row.DollarsPerStep / floor,
			Measured: fmt.Sprintf("%s at list price, 20-disk Hanoi, p = %g, k = %d, %d steps through serve-sim, samples per request and caching both on: $%.6f a step against $%.6f of output (%d output, %d input, %d of them cached, tokens in %d requests)",
				"openai:gpt-4.1-mini", costP, k, row.Steps, row.DollarsPerStep, floor, row.OutputTokens, row.InputTokens, row.CachedInputTokens, row.Requests)}
		if reply == "short" {
			g.Bar = 1.70
			g.Note = "bar ×1.70, the first full run's ×1.60 and a margin (token counts are reproducible from the seed): at short replies the prompt is most of the bill; cached, it is still a quarter of the input price, and the paper's first sample at temperature 0 is a request of its own, with its own prompt"
		} else {
			g.Bar = 1.10
			g.Note = "bar ×1.10"
		}
		out = append(out, g)
	}
	return out, nil
}

// providerRPM is a provider's own rate limit in front of a model: a token
// bucket at RPM a minute with a one-second burst; a call beyond it is
// answered with a rate-limit error, as a provider's 429.
type providerRPM struct {
	llms.Model
	lim      *xrate.Limiter
	answered atomic.Int64 // calls answered (with a reply or an error)
	limited  atomic.Int64 // of them 429s
}

func newProviderRPM(m llms.Model, rpm float64) *providerRPM {
	return &providerRPM{Model: m, lim: xrate.NewLimiter(xrate.Limit(rpm/60), max(1, int(rpm/60)))}
}

func (p *providerRPM) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	p.answered.Add(1)
	if !p.lim.Allow() {
		p.limited.Add(1)
		return nil, llms.NewError(llms.ErrCodeRateLimit, "bench provider", "429 too many requests: over the provider's rate")
	}
	return p.Model.GenerateContent(ctx, msgs, opts...)
}

// feltRate: a batch of one-disk Hanoi tasks under maker solve's limits
// with --rpm 600, against a provider that allows 600 a minute: the share
// of the allowed rate the batch used, and its 429s.
func feltRate(ctx context.Context, seed uint64, sz feltSize) ([]FeltGoal, error) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Latency = seed, sim.FixedLatency(feltLatency)
	m, err := sim.New(hanoi.Oracle{}, cfg)
	if err != nil {
		return nil, err
	}
	provider := newProviderRPM(m, feltRPM)
	limits, err := batch.NewLimits(batch.LimitConfig{RPM: feltRPM, MaxInFlight: solveMaxInFlight, Retries: solveRetries})
	if err != nil {
		return nil, err
	}
	b := &batch.Builtin{Model: func(batch.Job, sim.Oracle, uint64) (llms.Model, error) { return provider, nil },
		Config: maker.Config{Vote: vote.Config{K: feltK}, SamplesPerCall: maker.SamplesPerCallAuto}}
	jobs := make([]batch.Job, sz.rateTasks)
	for i := range jobs {
		jobs[i] = batch.Job{ID: fmt.Sprintf("t%d", i), Line: i + 1, Hanoi: &batch.HanoiJob{Disks: 1}}
	}
	r := &batch.Runner{Build: b.Build, Concurrency: solveConcurrency, Limits: limits}
	start := time.Now()
	sum, err := r.Run(ctx, jobs)
	wall := time.Since(start)
	if err != nil {
		return nil, err
	}
	if sum.Solved != len(jobs) {
		return nil, fmt.Errorf("%d of %d tasks solved", sum.Solved, len(jobs))
	}
	st := limits.Stats()
	// The calls the limit allowed in the batch's wall: a full bucket (one
	// call) at the start, then 10 a second.
	used := float64(st.Calls) / (1 + wall.Seconds()*feltRPM/60)
	note := quickNote(sz, "%d tasks instead of %d; the share is over %d calls, so one call's latency at the end weighs more", sz.rateTasks, feltTasks, st.Calls)
	rateRow := FeltGoal{Name: fmt.Sprintf("a %d-task batch under --rpm 600: share of the allowed rate used", sz.rateTasks), Unit: "%", Judge: AtLeast, Target: 0.95, Bar: 0.90, quickBar: 0.85, Figure: used,
		Measured: fmt.Sprintf("%d calls started in %s, of the %.0f the limit allowed in that time (one at the start, then 10 a second): one-disk Hanoi tasks, k = %d, samples per request, maker solve's defaults (--concurrency %d, --max-inflight %d, 3 retries after a 429), 50 ms latency",
			st.Calls, wall.Round(100*time.Millisecond), 1+wall.Seconds()*feltRPM/60, feltK, solveConcurrency, solveMaxInFlight),
		Note: joinNotes(note, "bar 90%")}
	storm := FeltGoal{Name: "the same batch: 429 answers per 1,000 calls", Unit: "", Judge: AtMost, Target: 0, Bar: 10,
		Figure:   1000 * float64(provider.limited.Load()) / float64(max(provider.answered.Load(), 1)),
		Measured: fmt.Sprintf("%d of %d calls answered 429 by a provider allowing 600 a minute (a token bucket with a one-second burst); %d calls paused by the limits", provider.limited.Load(), provider.answered.Load(), st.Paused),
		Note:     "bar 10 per 1,000 (1%): a storm is many in a row"}
	return []FeltGoal{rateRow, storm}, nil
}

// feltScaleOut: a latency-bound batch over the NATS engine, on 4 workers
// and on 1 (each --inflight 4), as maker solve --nats runs it with every
// task at once (--concurrency 16: the workers, not the coordinator, bound
// it): the throughput of 4 over 1's. Beside it, 4 workers at maker
// solve's default --concurrency 4, against the same 1-worker runs (one
// worker is the bound at either concurrency).
func feltScaleOut(ctx context.Context, seed uint64, sz feltSize) ([]FeltGoal, error) {
	var ratios, defRatios, ones, fours, defs []float64
	for i := range sz.workerRuns {
		one, err := engineBatch(ctx, seed, 1, sz.workerTasks, sz, fmt.Sprintf("one-%d", i))
		if err != nil {
			return nil, fmt.Errorf("one worker: %w", err)
		}
		four, err := engineBatch(ctx, seed, feltWorkers, sz.workerTasks, sz, fmt.Sprintf("four-%d", i))
		if err != nil {
			return nil, fmt.Errorf("%d workers: %w", feltWorkers, err)
		}
		def, err := engineBatch(ctx, seed, feltWorkers, solveConcurrency, sz, fmt.Sprintf("default-%d", i))
		if err != nil {
			return nil, fmt.Errorf("%d workers, --concurrency %d: %w", feltWorkers, solveConcurrency, err)
		}
		ratios, defRatios = append(ratios, one.Seconds()/four.Seconds()), append(defRatios, one.Seconds()/def.Seconds())
		ones, fours, defs = append(ones, one.Seconds()), append(fours, four.Seconds()), append(defs, def.Seconds())
	}
	lo, hi := minMax(ratios)
	dlo, dhi := minMax(defRatios)
	main := FeltGoal{Name: "a latency-bound batch: throughput on 4 workers over 1", Unit: "×", Judge: AtLeast, Target: 3.6, Bar: 2.8, quickBar: 2.0, Figure: median(ratios),
		Measured: fmt.Sprintf("%d %d-disk Hanoi tasks at 50 ms, k = %d, workers of --inflight %d on an embedded NATS server, one coordinator (cluster.SolveBatch as maker solve --nats runs it, --concurrency %d: every task at once, --max-inflight %d): %.2f s on 1 worker, %.2f s on %d (medians of %d alternating runs; ratio %.2f–%.2f)",
			sz.workerTasks, sz.workerDisks, feltK, feltInflight, sz.workerTasks, solveMaxInFlight, median(ones), median(fours), feltWorkers, sz.workerRuns, lo, hi),
		Note: joinNotes(quickNote(sz, "%d tasks of %d disks instead of 16 of 4", sz.workerTasks, sz.workerDisks),
			"bar ×2.8. Why it misses: (1) fixed with this suite: a drained task queue kept every coordinator about 2 s at the end of a batch (×1.92 and ×2.34 in two probes of this setting before, ×3.06 and ×3.01 after; cluster.TaskQueue.Serve), so its return fails the bar; "+
				"(2) a wave is one job, and a worker holds up to --inflight jobs but makes --inflight calls at once, so one worker can hold three waves while another idles (a job per sample, DrawerConfig.Spread, gave ×3.38 against ×3.10 in one probe; not changed here); "+
				"(3) about 0.6 s a batch of queue, per-task journal streams and results on the engine, against an ideal of 2.3 s on 4 workers")}
	def := FeltGoal{Name: fmt.Sprintf("the same at maker solve's default --concurrency %d", solveConcurrency), Unit: "×", Judge: Info, Figure: median(defRatios),
		Measured: fmt.Sprintf("%.2f s on %d workers (ratio %.2f–%.2f), against the same 1-worker runs", median(defs), feltWorkers, dlo, dhi),
		Note:     fmt.Sprintf("%d tasks at once draw at most %d samples at once, under the %d places of %d workers: the coordinator, not the workers, bounds it; raise --concurrency", solveConcurrency, solveConcurrency*feltK, feltWorkers*feltInflight, feltWorkers)}
	return []FeltGoal{main, def}, nil
}

// engineBatch solves the workers batch over an embedded NATS server with
// n workers, and returns its wall time.
func engineBatch(ctx context.Context, seed uint64, n, concurrency int, sz feltSize, queue string) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "mdap-bench-workers-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: filepath.Join(dir, "engine")})
	if err != nil {
		return 0, err
	}
	defer srv.Shutdown()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Latency = seed, sim.FixedLatency(feltLatency)
	route, err := sim.New(hanoi.Oracle{}, cfg)
	if err != nil {
		return 0, err
	}
	connect := func(name string) (jetstream.JetStream, func(), error) {
		nc, err := cluster.Connect(srv.ClientURL(), name)
		if err != nil {
			return nil, nil, err
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return nil, nil, err
		}
		return js, nc.Close, nil
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	for i := range n {
		js, closeConn, err := connect(fmt.Sprintf("bench-worker-%d", i))
		if err != nil {
			return 0, err
		}
		defer closeConn()
		m, err := sim.New(hanoi.Oracle{}, cfg)
		if err != nil {
			return 0, err
		}
		w, err := cluster.NewWorker(ctx, js, m, cluster.WorkerConfig{Inflight: feltInflight})
		if err != nil {
			return 0, err
		}
		wg.Go(func() { _ = w.Run(wctx) })
	}
	js, closeConn, err := connect("bench-coordinator")
	if err != nil {
		return 0, err
	}
	defer closeConn()
	d, err := cluster.NewDrawer(ctx, js, cluster.DrawerConfig{})
	if err != nil {
		return 0, err
	}
	defer func() { _ = d.Close() }()
	model, err := d.Model(route.Identity())
	if err != nil {
		return 0, err
	}
	limits, err := batch.NewLimits(batch.LimitConfig{MaxInFlight: solveMaxInFlight, Retries: solveRetries})
	if err != nil {
		return 0, err
	}
	b := &batch.Builtin{Model: func(batch.Job, sim.Oracle, uint64) (llms.Model, error) { return model, nil }, Config: maker.Config{Vote: vote.Config{K: feltK}}}
	store, err := batch.OpenStore(filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "state"))
	if err != nil {
		return 0, err
	}
	defer store.Close()
	jobs := make([]batch.Job, sz.workerTasks)
	for i := range jobs {
		jobs[i] = batch.Job{ID: fmt.Sprintf("t%d", i), Line: i + 1, Hanoi: &batch.HanoiJob{Disks: sz.workerDisks}}
	}
	start := time.Now()
	sum, err := cluster.SolveBatch(ctx, js, cluster.BatchConfig{Queue: "bench-" + queue, Jobs: jobs, Store: store, Concurrency: concurrency,
		Runner: batch.Runner{Build: b.Build, Limits: limits}})
	wall := time.Since(start)
	if err != nil {
		return 0, err
	}
	if sum.Solved != len(jobs) {
		return 0, fmt.Errorf("%d of %d tasks solved", sum.Solved, len(jobs))
	}
	return wall, nil
}
