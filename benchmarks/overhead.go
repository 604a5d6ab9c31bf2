package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// The overhead suite: the step loop against what it could cost at least, run
// side by side in one process, as ratios of CPU per sample.
//
//   - in process: maker.Solver on the sim (at --parallel k, the CLI's
//     default, and 1; with and without a journal) against [Floor], a
//     program with nothing but the sim, a hash, an ahead-by-k tally, one
//     parse of the winner and Advance;
//   - over HTTP: maker.Solver through maker/models' OpenAI client against
//     [ReferenceLoop], the paper's sequential voting loop written plainly
//     (net/http, encoding/json, regular expressions), over the same
//     serve-sim; and, when python3 is on PATH, also against the same loop
//     in Python (paperloop.py, see pythonLoop), the issue's own baseline.
//
// Every variant of a run draws the same samples (the sim is a function of
// the seed, the step and the sample's index, and each sends the index as
// the seed), so samples per step agree and the ratios compare the
// machinery alone. Each figure is the median over runs that alternate the
// variants; the spread is the smallest and largest ratio of a run. The
// journal's ratio is measured finer (see [interleavedJournal]): the two
// solves run at once, taking turns every journalTurn steps.

// SpeedRow is one variant of the overhead suite against its baseline.
type SpeedRow struct {
	Variant  string `json:"variant"`
	Baseline string `json:"baseline,omitempty"`
	Runs     int    `json:"runs"`
	Samples  int    `json:"samples"` // per run
	// CPUPerSample and WallPerSample are medians, in microseconds (the
	// process's user+system CPU; over HTTP the server is a child process,
	// so it is the client's alone).
	CPUPerSample  float64 `json:"cpu_per_sample_us"`
	WallPerSample float64 `json:"wall_per_sample_us"`
	// Ratio is the median over runs of this variant's CPU per sample over
	// its baseline's in the same run; Lo and Hi the smallest and largest.
	Ratio   float64 `json:"cpu_ratio,omitempty"`
	RatioLo float64 `json:"cpu_ratio_lo,omitempty"`
	RatioHi float64 `json:"cpu_ratio_hi,omitempty"`
	// Interleaved marks a row measured with its baseline by
	// interleavedJournal, Runs times: its CPU and wall figures are its own
	// turns', its ratio each run's to the baseline's turns in that run.
	Interleaved bool `json:"interleaved,omitempty"`
}

// SpeedResult is the overhead suite's result.
type SpeedResult struct {
	K         int        `json:"k"`
	Disks     int        `json:"disks"`      // in process
	HTTPDisks int        `json:"http_disks"` // over HTTP
	Rows      []SpeedRow `json:"rows"`
	// Python is the version of the python3 that ran the paper's loop in
	// Python (its rows' baseline), or empty when it did not run; then
	// PythonNotRun says why.
	Python       string `json:"python,omitempty"`
	PythonNotRun string `json:"python_not_run,omitempty"`
}

func speedUnits() int { return 2 }

// speedVariant is one way to solve the same Hanoi run.
type speedVariant struct {
	name, baseline string
	// also, when set, is a second baseline: the variant's runs against it
	// make a row of their own, after every variant's first row.
	also string
	run  func(ctx context.Context) (samples int, err error)
	// self, when set instead of run, is a child process that measures its
	// own CPU and wall time (the paper's loop in Python: the interpreter's
	// start-up is not the loop's cost, and a child's CPU is not this
	// process's).
	self func(ctx context.Context) (samples int, cpu, wall time.Duration, err error)
	// paired, when set instead of run, measures the variant and its
	// baseline together (interleavedJournal), pairedRuns times a round.
	paired func(ctx context.Context) (pairedRun, error)
}

// pairedRuns is how many interleaved runs the journal's row makes per
// round of the suite: its ratio is the median of 2 × runs of them.
const pairedRuns = 2

func runSpeed(ctx context.Context, o Options, tick func()) (*SpeedResult, error) {
	if o.Quick {
		return runSpeedSized(ctx, o, 10, 7, 3, tick)
	}
	return runSpeedSized(ctx, o, 13, 9, 5, tick)
}

func runSpeedSized(ctx context.Context, o Options, disks, httpDisks, runs int, tick func()) (*SpeedResult, error) {
	res := &SpeedResult{K: 3, Disks: disks, HTTPDisks: httpDisks}
	cfg := sim.DefaultConfig()
	cfg.Seed = o.Seed
	dir, err := os.MkdirTemp("", "mdap-speed-")
	if err != nil {
		return nil, fmt.Errorf("benchmarks: overhead: %w", err)
	}
	defer os.RemoveAll(dir)
	solve := func(disks int, model func() (llms.Model, func() error, error), parallel int, tune ...func(*maker.Solver)) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			m, stop, err := model()
			if err != nil {
				return 0, err
			}
			defer stop()
			task, _ := hanoi.New(disks)
			s := &maker.Solver{Model: m, Vote: vote.Config{K: res.K, Parallel: parallel}}
			for _, f := range tune {
				f(s)
			}
			rep, err := s.Solve(ctx, task)
			if err == nil && !task.Solved() {
				err = errors.New("not solved")
			}
			return rep.Launched, err
		}
	}
	inProc := func() (llms.Model, func() error, error) {
		m, err := sim.New(hanoi.Oracle{}, cfg)
		return m, func() error { return nil }, err
	}
	const (
		floor     = "floor (sim, hash, tally, one parse, Advance)"
		httpWaves = httpWavesRow // a wave's samples in one request
		solverK   = "in process, --parallel k"
		ref       = referenceRow
		py        = pythonRow
	)
	srv, err := startSimServer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	floorReqs, err := recordFloor(ctx, srv.url+"/v1", srv.model, res.HTTPDisks, res.K)
	if err != nil {
		return nil, err
	}
	overHTTP := func() (llms.Model, func() error, error) {
		m, err := models.Open("openai:"+srv.model, models.Options{BaseURL: srv.url + "/v1", APIKey: "placeholder", Timeout: 30 * time.Second})
		return m, func() error { return nil }, err
	}
	variants := []speedVariant{
		{name: floor, run: func(ctx context.Context) (int, error) {
			r, err := Floor(ctx, res.Disks, res.K, cfg)
			return r.Samples, err
		}},
		{name: solverK, baseline: floor, run: solve(res.Disks, inProc, 0)},
		{name: "in process, --parallel 1", baseline: floor, run: solve(res.Disks, inProc, 1)},
		{name: "in process, --parallel k, journal", baseline: solverK, paired: func(ctx context.Context) (pairedRun, error) {
			return interleavedJournal(ctx, res.Disks, res.K, cfg, dir)
		}},
		{name: ref, run: func(ctx context.Context) (int, error) {
			r, err := ReferenceLoop(ctx, http.DefaultTransport.(*http.Transport).Clone(), srv.url+"/v1", srv.model, res.HTTPDisks, res.K)
			return r.Samples, err
		}},
		{name: httpOneRow, baseline: ref, also: py, run: solve(res.HTTPDisks, overHTTP, 1)},
		{name: httpKRow, baseline: ref, also: py, run: solve(res.HTTPDisks, overHTTP, 0)},
		{name: httpWaves, baseline: ref, also: py, run: solve(res.HTTPDisks, overHTTP, 0, func(s *maker.Solver) { s.SamplesPerCall = maker.SamplesPerCallAuto })},
		{name: httpFloorOneRow, baseline: ref, run: floorReqs.runOne},
		{name: httpFloorWavesRow, baseline: ref, run: floorReqs.runWaves},
	}
	switch python, err := newPythonLoop(ctx, dir); {
	case errors.Is(err, errNoPython):
		res.PythonNotRun = errNoPython.Error()
	case err != nil:
		return nil, err
	default:
		res.Python = python.version
		// The Go reference against it too: how far apart the two
		// baselines are.
		variants[slices.IndexFunc(variants, func(v speedVariant) bool { return v.name == ref })].also = py
		variants = append(variants, speedVariant{name: py, self: func(ctx context.Context) (int, time.Duration, time.Duration, error) {
			r, err := python.run(ctx, srv.url+"/v1", srv.model, res.HTTPDisks, res.K)
			return r.Samples, r.cpu(), r.wall(), err
		}})
	}
	cpus := make([][]float64, len(variants))
	walls := make([][]float64, len(variants))
	paired := make([][]float64, len(variants)) // the paired rows' ratios
	samples := make([]int, len(variants))
	for r := range runs {
		for i, v := range variants {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if v.paired != nil {
				for range pairedRuns {
					p, err := v.paired(ctx)
					if err != nil {
						return nil, fmt.Errorf("benchmarks: overhead: %s: %w", v.name, err)
					}
					samples[i] = p.samples
					cpus[i] = append(cpus[i], float64(p.cpu[1].Nanoseconds())/1e3/float64(p.samples))
					walls[i] = append(walls[i], float64(p.wall[1].Nanoseconds())/1e3/float64(p.samples))
					paired[i] = append(paired[i], float64(p.cpu[1])/float64(p.cpu[0]))
				}
				continue
			}
			runtime.GC()
			var (
				n         int
				cpu, wall time.Duration
				err       error
			)
			if v.self != nil {
				n, cpu, wall, err = v.self(ctx)
			} else {
				cpu0, start := cpuTime(), time.Now()
				n, err = v.run(ctx)
				cpu, wall = cpuTime()-cpu0, time.Since(start)
			}
			if err != nil {
				return nil, fmt.Errorf("benchmarks: overhead: %s: %w", v.name, err)
			}
			if r > 0 && n != samples[i] {
				return nil, fmt.Errorf("benchmarks: overhead: %s drew %d samples, then %d: the runs are not the same", v.name, samples[i], n)
			}
			samples[i] = n
			cpus[i] = append(cpus[i], float64(cpu.Nanoseconds())/1e3/float64(n))
			walls[i] = append(walls[i], float64(wall.Nanoseconds())/1e3/float64(n))
		}
		if r == 0 {
			tick()
		}
	}
	if p, g := slices.IndexFunc(variants, func(v speedVariant) bool { return v.name == py }), slices.IndexFunc(variants, func(v speedVariant) bool { return v.name == ref }); p >= 0 && samples[p] != samples[g] {
		return nil, fmt.Errorf("benchmarks: overhead: the paper's loop drew %d samples in Python, %d in Go: they do not send the same requests", samples[p], samples[g])
	}
	row := func(i int, baseline string) SpeedRow {
		v := variants[i]
		row := SpeedRow{Variant: v.name, Baseline: baseline, Runs: runs, Samples: samples[i],
			CPUPerSample: median(cpus[i]), WallPerSample: median(walls[i])}
		if v.paired != nil {
			r := paired[i]
			row.Runs, row.Interleaved = len(r), true
			row.Ratio, row.RatioLo, row.RatioHi = median(r), slices.Min(r), slices.Max(r)
		} else if b := slices.IndexFunc(variants, func(w speedVariant) bool { return w.name == baseline }); b >= 0 {
			var ratios []float64
			for r := range runs {
				ratios = append(ratios, cpus[i][r]/cpus[b][r])
			}
			row.Ratio, row.RatioLo, row.RatioHi = median(ratios), slices.Min(ratios), slices.Max(ratios)
		}
		return row
	}
	for i, v := range variants {
		res.Rows = append(res.Rows, row(i, v.baseline))
	}
	for i, v := range variants {
		if v.also != "" && slices.ContainsFunc(variants, func(w speedVariant) bool { return w.name == v.also }) {
			res.Rows = append(res.Rows, row(i, v.also))
		}
	}
	tick()
	return res, nil
}

// pairedRun is one run of interleavedJournal: CPU and wall time of each
// solve's turns (0: without a journal, 1: with one) and the samples each
// drew.
type pairedRun struct {
	cpu, wall [2]time.Duration
	samples   int
}

// journalTurn is how many steps each solve of interleavedJournal runs
// before the other takes its turn: about a millisecond on the sim. It is
// not the journal's batch (maker.DefaultSyncEvery): a batch's write falls
// in one of the journaled solve's turns, and every turn of that solve is
// charged to the journal's side.
const journalTurn = 64

// interleavedJournal solves disks-disk Hanoi on the sim (cfg) twice at
// once, without and with a file journal in dir, the two taking turns:
// each runs journalTurn steps (its Progress callback passes a baton to
// the other and waits for it back), so only one runs at a time, and each
// turn's process CPU (getrusage: user + system, every thread's) and wall
// time go to the solve that ran it. The journaled solve's turns include
// creating the journal, its writes, its fsync at Close, and any
// background fsync that runs during them.
//
// Why: on a shared machine the CPU a solve takes moves with the machine's
// load (other processes' use of the caches and cores) by ±20% between
// runs a second apart, more than the journal costs; whole runs one after
// another, even alternating, then measure mostly the load. Turns of a few
// milliseconds share the load's moves between the two, and the ratio of
// their sums is the journal's cost. What it cannot split: a collection
// (both solves' garbage, about equal) and a background fsync that
// overruns its turn are charged to the turn they run in. The same
// measurement with no journal on either side gives ratios within about
// ±5% of 1 on this 2-core machine under load.
func interleavedJournal(ctx context.Context, disks, k int, cfg sim.Config, dir string) (pairedRun, error) {
	var (
		run      pairedRun
		batons   = [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		finished [2]bool
		errs     [2]error
		launched [2]int
		cpu0     time.Duration
		wall0    time.Time
		done     = make(chan struct{}, 2)
	)
	// Only the solve holding the baton touches these; the channels order
	// every access.
	account := func(i int) {
		run.cpu[i] += cpuTime() - cpu0
		run.wall[i] += time.Since(wall0)
	}
	resume := func() { cpu0, wall0 = cpuTime(), time.Now() }
	path := filepath.Join(dir, "interleaved.jsonl")
	_ = os.Remove(path)
	for i := range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			<-batons[i]
			resume()
			launched[i], errs[i] = func() (int, error) {
				m, err := sim.New(hanoi.Oracle{}, cfg)
				if err != nil {
					return 0, err
				}
				task, _ := hanoi.New(disks)
				s := &maker.Solver{Model: m, Vote: vote.Config{K: k}, Progress: func(e maker.Event) {
					if e.Step%journalTurn == journalTurn-1 && !finished[1-i] {
						account(i)
						batons[1-i] <- struct{}{}
						<-batons[i]
						resume()
					}
				}}
				if i == 1 {
					if s.Journal, err = maker.CreateJournal(path); err != nil {
						return 0, err
					}
				}
				rep, err := s.Solve(ctx, task)
				if s.Journal != nil {
					err = errors.Join(err, s.Journal.Close())
				}
				if err == nil && !task.Solved() {
					err = errors.New("not solved")
				}
				return rep.Launched, err
			}()
			account(i)
			finished[i] = true
			if !finished[1-i] {
				batons[1-i] <- struct{}{} // the other is waiting, or yet to start
			}
		}()
	}
	runtime.GC()
	batons[0] <- struct{}{}
	<-done
	<-done
	_ = os.Remove(path) // after the measurement: deleting is not the journal's cost
	if err := errors.Join(errs[0], errs[1]); err != nil {
		return run, err
	}
	if launched[0] != launched[1] {
		return run, fmt.Errorf("without a journal %d samples, with one %d: the runs are not the same", launched[0], launched[1])
	}
	run.samples = launched[1]
	return run, nil
}

// simServer is a serve-sim on loopback, in a child process of its own so
// that the process's CPU time is the client's alone.
type simServer struct {
	url, model string
	stop       func() error
}

// serveSimEnv makes a process that is this package's importer (the maker
// binary, a test binary) a serve-sim child instead: see serveSimChild.
const serveSimEnv = "MDAP_BENCH_SERVE_SIM_SEED"

func init() {
	if seed, ok := os.LookupEnv(serveSimEnv); ok {
		os.Exit(serveSimChild(seed))
	}
}

// serveSimChild serves the Hanoi sim (sim.DefaultConfig with seed) on
// 127.0.0.1 at a free port, writes "url model" on stdout, and serves until
// its stdin ends (the parent closed it or died). It returns the exit code.
func serveSimChild(seed string) int {
	cfg := sim.DefaultConfig()
	if _, err := fmt.Sscan(seed, &cfg.Seed); err != nil {
		fmt.Fprintln(os.Stderr, "serve-sim child: bad seed:", err)
		return 2
	}
	srv, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-sim child:", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-sim child:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	fmt.Printf("http://%s %s\n", ln.Addr(), srv.ModelName())
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, "serve-sim child:", err)
		return 1
	}
	return 0
}

// startSimServer starts a serve-sim child: this very executable, with
// serveSimEnv set.
func startSimServer(ctx context.Context, cfg sim.Config) (*simServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("benchmarks: serve-sim child: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", serveSimEnv, cfg.Seed))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("benchmarks: serve-sim child: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("benchmarks: serve-sim child: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("benchmarks: serve-sim child: %w", err)
	}
	stop := func() error {
		_ = stdin.Close()
		return cmd.Wait()
	}
	var url, model string
	if _, err := fmt.Fscan(stdout, &url, &model); err != nil {
		return nil, errors.Join(fmt.Errorf("benchmarks: serve-sim child did not say where it listens: %w", err), stop())
	}
	return &simServer{url: url, model: model, stop: stop}, nil
}

// ReferenceRun is what one run of [ReferenceLoop] did.
type ReferenceRun struct {
	Steps, Samples int
	Solved         bool
}

// The paper's parser: the last `move = [...]` and `next_state = [[...]]`.
var (
	refMove  = regexp.MustCompile(`(?i)move\s*=\s*(\[[^\[\]]*\])`)
	refState = regexp.MustCompile(`(?i)next_state\s*=\s*(\[\s*\[[^\[\]]*\]\s*,\s*\[[^\[\]]*\]\s*,\s*\[[^\[\]]*\]\s*\])`)
)

// ReferenceLoop is the paper's sequential voting loop (its call_llm and
// do_voting, from the paper's description), written as plainly as its
// Python is: for each step, call the model (an OpenAI-compatible chat
// completion with a plain net/http client over transport: the request a
// map marshalled by encoding/json, the reply decoded into a map) at
// temperature 0 for the first sample and 0.1 after, the reply capped at
// 750 tokens; red-flag a reply over the cap or cut off, or one the
// parser (regular expressions, then JSON for the lists) cannot read; vote
// on the parsed move and state until one leads every other by k; apply
// the winner. The prompts are the Hanoi task's, and each sample sends its
// index plus one as the seed, as maker.Solver does, so that over the same
// serve-sim both draw the same samples. It is the baseline the overhead
// suite measures mdap's HTTP path against.
//
// Errors: ErrFloor (wrapped) for a step undecided after 1000 samples or a
// winner that does not apply; HTTP and decoding errors; ctx.Err().
func ReferenceLoop(ctx context.Context, transport http.RoundTripper, baseURL, model string, disks, k int) (ReferenceRun, error) {
	var run ReferenceRun
	client := &http.Client{Transport: transport, Timeout: time.Minute}
	task, err := hanoi.New(disks)
	if err != nil {
		return run, err
	}
	callLLM := func(msgs []llms.MessageContent, temperature float64, seed int) (text, finish string, outTokens int, err error) {
		messages := []map[string]any{}
		for _, m := range msgs {
			role := "user"
			if m.Role == llms.ChatMessageTypeSystem {
				role = "system"
			}
			var b strings.Builder
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					b.WriteString(t.Text)
				}
			}
			messages = append(messages, map[string]any{"role": role, "content": b.String()})
		}
		body, err := json.Marshal(map[string]any{"model": model, "messages": messages, "temperature": temperature, "max_tokens": maker.DefaultMaxTokens, "seed": seed})
		if err != nil {
			return "", "", 0, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/chat/completions", bytes.NewReader(body))
		if err != nil {
			return "", "", 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer placeholder")
		resp, err := client.Do(req)
		if err != nil {
			return "", "", 0, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", "", 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return "", "", 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
		}
		var reply map[string]any
		if err := json.Unmarshal(raw, &reply); err != nil {
			return "", "", 0, err
		}
		choices, _ := reply["choices"].([]any)
		if len(choices) == 0 {
			return "", "", 0, errors.New("no choice")
		}
		choice, _ := choices[0].(map[string]any)
		message, _ := choice["message"].(map[string]any)
		text, _ = message["content"].(string)
		finish, _ = choice["finish_reason"].(string)
		usage, _ := reply["usage"].(map[string]any)
		tokens, _ := usage["completion_tokens"].(float64)
		return text, finish, int(tokens), nil
	}
	// getVote parses a reply into its vote, or red-flags it (ok false).
	getVote := func(text, finish string, outTokens int) (vote string, move, state []any, ok bool) {
		if finish == "length" || outTokens > maker.DefaultMaxTokens {
			return "", nil, nil, false
		}
		ms, ss := refMove.FindAllStringSubmatch(text, -1), refState.FindAllStringSubmatch(text, -1)
		if len(ms) == 0 || len(ss) == 0 {
			return "", nil, nil, false
		}
		if json.Unmarshal([]byte(ms[len(ms)-1][1]), &move) != nil || len(move) != 3 {
			return "", nil, nil, false
		}
		if json.Unmarshal([]byte(ss[len(ss)-1][1]), &state) != nil {
			return "", nil, nil, false
		}
		return fmt.Sprint(move, state), move, state, true
	}
	for step := 0; !task.Done(); step++ {
		msgs := task.Messages()
		votes := map[string]int{}
		parsed := map[string]map[string]any{}
		var winner map[string]any
		for i := 0; winner == nil; i++ {
			if i == 1000 {
				return run, fmt.Errorf("%w: reference loop: step %d undecided after 1000 samples", ErrFloor, step)
			}
			temperature := 0.1
			if i == 0 {
				temperature = 0
			}
			text, finish, out, err := callLLM(msgs, temperature, i+1)
			run.Samples++
			if err != nil {
				return run, err
			}
			v, move, state, ok := getVote(text, finish, out)
			if !ok {
				continue
			}
			votes[v]++
			if parsed[v] == nil {
				parsed[v] = map[string]any{"move": move, "next_state": state}
			}
			best := 0
			for other, n := range votes {
				if other != v {
					best = max(best, n)
				}
			}
			if votes[v] >= k+best {
				winner = parsed[v]
			}
		}
		a, err := hanoi.AnswerFromValue(winner, disks)
		if err != nil {
			return run, fmt.Errorf("%w: reference loop: step %d: %w", ErrFloor, step, err)
		}
		if _, err := task.Advance(a); err != nil {
			return run, err
		}
		run.Steps++
	}
	run.Solved = task.Solved()
	return run, nil
}

func writeSpeed(b *strings.Builder, s *SpeedResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Overhead: the step loop against its floor, the HTTP path against the paper's loop\n\n")
	w("k = %d. In process: %d-disk Hanoi on the sim; the floor is `benchmarks.Floor` (the sim, an FNV hash of each reply, an ahead-by-k tally, one parse of the winner, `Advance`, nothing else). Over HTTP: %d-disk Hanoi against one `maker serve-sim` on 127.0.0.1 (the server runs in a child process: CPU is the client's alone); the reference is `benchmarks.ReferenceLoop`, the paper's sequential `call_llm`/`do_voting` loop with a plain net/http client, the HTTP goals' baseline. Runs alternate the rows; a ratio is the median over runs of the row's CPU per sample over its baseline's in the same run, with the smallest and largest.\n\n", s.K, s.Disks, s.HTTPDisks)
	w("Rows: *floor* is `benchmarks.Floor`. *in process, --parallel k* is `maker.Solver` on the sim with waves of k samples at once (the CLI's default), *--parallel 1* one sample at a time (drawn inline), *journal* the former with a file journal (buffered, written and synced with the periodic sync), measured against it differently: the two solves run at once, taking turns of %d steps, and each turn's process CPU goes to the solve that ran it (`benchmarks.interleavedJournal`; whole runs one after another measure the machine's load more than the journal); its runs are such pairs, its CPU and wall figures its own turns'. *reference loop* is `benchmarks.ReferenceLoop`: one HTTP request per sample, one sample at a time, as the paper's loop. *HTTP, --parallel 1* is `maker.Solver` through `maker/models` (the lean OpenAI path) with one request per sample, one at a time: the same requests as the reference loop. *HTTP, --parallel k* sends a wave's k requests at once, still one sample per request. *HTTP, waves + samples per request* is `--parallel k --samples-per-call auto`: a wave's samples in one request (`n`, which serve-sim honours; the temperature-0 first sample of a step keeps its own request), so it makes fewer requests than the reference loop for the same samples; its ratio is CPU per sample, the figure a user pays, not a like-for-like cost per request. *net/http floor* rows (`benchmarks.httpFloor`) send the reference loop's own requests again, recorded once and already encoded, with its plain net/http client, each reply read and dropped: no JSON, no parsing, no vote, only what every Go client of those requests pays (net/http, the runtime's scheduling of its goroutines, the system calls). *one per sample* sends them one at a time, as the reference loop; *a step's samples in two requests at once* sends each step's first sample alone and the others as one request (`n`), the two at once, as the waves row does when a step is decided in one wave (it never makes more requests than the waves row).\n\n", journalTurn)
	if s.PythonNotRun != "" {
		w("The paper's loop in Python (`benchmarks/paperloop.py`, the baseline of issue #24's own figures) was not run: %s.\n\n", s.PythonNotRun)
	} else {
		w("*the paper's loop in Python* is `benchmarks/paperloop.py` run by Python %s: the reference loop as the paper's own Python is written, the baseline issue #24's figures were measured against. The standard library only: `http.client` with one kept-alive connection, `json` into dicts, the same regular expressions; it builds each step's prompt from the state it tracks (the Hanoi template's fixed text handed over once per run), so it sends the Go reference's requests and draws its samples (the suite fails if their samples differ). Its CPU and wall figures are its own loop's (`time.process_time`, `time.perf_counter`), without the interpreter's start-up. The rows after it are the same runs of the Go reference and of mdap's HTTP path against it, for information: the goals are judged against the Go reference.\n\n", s.Python)
	}
	w("| variant | against | runs | samples/run | CPU/sample | wall/sample | CPU ratio (min–max) |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range s.Rows {
		ratio := "–"
		if r.Baseline != "" {
			ratio = fmt.Sprintf("×%.2f (%.2f–%.2f)", r.Ratio, r.RatioLo, r.RatioHi)
		}
		w("| %s | %s | %d | %d | %.1f µs | %.1f µs | %s |\n", r.Variant, r.Baseline, r.Runs, r.Samples, r.CPUPerSample, r.WallPerSample, ratio)
	}
	w("\n")
}

// The overhead rows of the HTTP path and its baselines.
const (
	// referenceRow is ReferenceLoop's: the HTTP goals' baseline.
	referenceRow = "reference loop over HTTP (paper's do_voting, net/http)"
	// pythonRow is the paper's loop in Python (pythonLoop): the baseline
	// issue #24's own figures were measured against.
	pythonRow  = "the paper's loop in Python (paperloop.py: http.client, json, re)"
	httpOneRow = "HTTP, --parallel 1 (maker/models)"
	httpKRow   = "HTTP, --parallel k (maker/models)"
	// httpWavesRow is the HTTP path with waves and a wave's samples in one
	// request.
	httpWavesRow = "HTTP, waves + samples per request (--parallel k --samples-per-call auto)"
)

// The overhead rows of the net/http floor (httpFloor): what any Go
// client of the same requests spends at least.
const (
	httpFloorOneRow   = "net/http floor: the reference loop's requests, one per sample"
	httpFloorWavesRow = "net/http floor: a step's samples in two requests at once"
)

// overheadGoals are issue #24's targets, from the overhead suite, and
// beside the HTTP ones the same ratios against the paper's loop in Python,
// for information: the goals are judged against the Go reference.
func overheadGoals(s *SpeedResult) []Goal {
	targets := []struct {
		goal, variant string
		max           float64
		python        bool // informational: the row against pythonRow
	}{
		{"in process: CPU per sample at most ×1.5 the floor (--parallel k)", "in process, --parallel k", 1.5, false},
		{"journal: at most ×1.05 CPU", "in process, --parallel k, journal", 1.05, false},
		{"HTTP: CPU per sample at most 0.4× the paper's loop (--parallel 1)", httpOneRow, 0.4, false},
		{"HTTP: CPU per sample at most 0.4× the paper's loop (waves + samples per request)", httpWavesRow, 0.4, false},
		{pythonGoalPrefix + "--parallel 1", httpOneRow, 0, true},
		{pythonGoalPrefix + "waves + samples per request", httpWavesRow, 0, true},
	}
	var out []Goal
	for _, t := range targets {
		g := Goal{Goal: t.goal, Met: "not run", Why: "overhead suite not run"}
		if s != nil && t.python && s.PythonNotRun != "" {
			g.Why = s.PythonNotRun
		}
		if s != nil {
			for _, r := range s.Rows {
				if r.Variant == t.variant && (r.Baseline == pythonRow) == t.python {
					how := "alternating runs"
					if r.Interleaved {
						how = fmt.Sprintf("interleaved runs, turns of %d steps", journalTurn)
					}
					g = Goal{Goal: t.goal, Met: yes(r.Ratio <= t.max),
						Measured: fmt.Sprintf("×%.2f (%.2f–%.2f over %d %s)", r.Ratio, r.RatioLo, r.RatioHi, r.Runs, how)}
					if t.python {
						g.Met, g.Why = "info", "informational, no target: the goal above is judged against the Go reference loop"
					}
					break
				}
			}
		}
		out = append(out, g)
	}
	return out
}

// pythonGoalPrefix begins the informational goal rows against the paper's
// loop in Python.
const pythonGoalPrefix = "HTTP, informational: CPU per sample against the paper's loop in Python (the issue's own baseline), "
