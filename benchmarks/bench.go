package benchmarks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/gcpolicy"
)

// ErrSuite: Options.Suites names a suite that does not exist.
var ErrSuite = errors.New("unknown benchmark suite")

// Suites are the suites, in the order Run runs them.
var Suites = []string{"fidelity", "strategies", "guarantee", "scale", "real", "cost", "observe", "engine", "goals", "decompose", "matching"}

// Options configure a Run. The zero value runs every suite at full size.
type Options struct {
	// Suites to run (names from Suites); empty means all.
	Suites []string
	// Quick runs every suite small enough for CI: seconds to a minute in
	// all on two cores, instead of many minutes.
	Quick bool
	// Seed is the root of every simulated model's seed.
	Seed uint64
	// Workers bounds the experiments run at once; 0 means GOMAXPROCS.
	Workers int
	// Command is the command line to print in the report.
	Command string
	// Progress, if set, is called as a suite advances, from any
	// goroutine (calls are serialised).
	Progress func(suite string, done, total int)
	// Adaptive builds the margin policy of the strategies suite's
	// adaptive-k row for a run of steps steps at the given target; nil
	// means adaptive.Policy with its defaults (see DefaultAdaptive).
	Adaptive func(steps int, target float64) (MarginPolicy, error)
	// Engine is the NATS engine's transport for the real suite; nil means
	// OverNATS.
	Engine Transport
}

func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Machine describes where a report was measured.
type Machine struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	// LoadBefore and LoadAfter are /proc/loadavg at the run's start and
	// end: a busy machine stretches wall times.
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
	// GCPercent is the garbage collector's target (GOGC) the run had:
	// Go's default (100) or the environment's; under the maker command's
	// heap floor (GCPolicy), the percent above the floor.
	GCPercent int `json:"gc_percent"`
	// GCPolicy describes the maker command's GC policy (a heap floor with
	// GOGC 100 above it, internal/gcpolicy) when the run had it: the
	// command applies it unless GOGC or GOMEMLIMIT is set. Empty otherwise.
	GCPolicy string `json:"gc_policy,omitempty"`
}

// Report is a run's results. Suites not run are nil.
type Report struct {
	Machine    Machine           `json:"machine"`
	Command    string            `json:"command"`
	Quick      bool              `json:"quick"`
	Seed       uint64            `json:"seed"`
	Started    time.Time         `json:"started"`
	Wall       time.Duration     `json:"wall_ns"`
	SuiteWall  map[string]string `json:"suite_wall"`
	Fidelity   *FidelityResult   `json:"fidelity,omitempty"`
	Strategies *StrategiesResult `json:"strategies,omitempty"`
	Scale      *ScaleResult      `json:"scale,omitempty"`
	Real       *RealResult       `json:"real,omitempty"`
	Guarantee  *GuaranteeResult  `json:"guarantee,omitempty"`
	Cost       *CostResult       `json:"cost,omitempty"`
	Observe    *ObserveResult    `json:"observe,omitempty"`
	EngineCost *EngineResult     `json:"engine,omitempty"`
	// Felt is the goals suite's: issue #36's user-felt goals, each with
	// its goal and its bar (see BarErr).
	Felt *FeltResult `json:"goals_suite,omitempty"`
	// Decompose is the decompose suite's: voted decomposition beside the
	// first-to-K baseline.
	Decompose *DecomposeResult `json:"decompose,omitempty"`
	// Matching is the matching suite's: surface forms voted with exact
	// keys against declared matching.
	Matching *MatchingResult `json:"matching,omitempty"`
	// Goals are the project's targets with the measured figure beside
	// each.
	Goals []Goal `json:"goals"`
	// Kept are the suites a merged report carried over from earlier runs
	// (see Merge), with the run of each; empty for a report of one run.
	Kept []KeptRun `json:"kept,omitempty"`
}

// Run runs the chosen suites one after another and returns their report.
// Errors: ErrSuite (wrapped) for an unknown suite name, before anything
// runs (the report is nil); a suite's failure (wrapped with its name) or
// ctx.Err(), with the report of the suites that finished before it (Ran
// names them; the failed suite's figures are dropped).
func Run(ctx context.Context, o Options) (*Report, error) {
	chosen := o.Suites
	if len(chosen) == 0 {
		chosen = Suites
	}
	for _, s := range chosen {
		if !slices.Contains(Suites, s) {
			return nil, fmt.Errorf("%w: %q (the suites: %s)", ErrSuite, s, strings.Join(Suites, ", "))
		}
	}
	if o.Adaptive == nil {
		o.Adaptive = DefaultAdaptive
	}
	if o.Engine == nil {
		o.Engine = OverNATS
	}
	rep := &Report{Command: o.Command, Quick: o.Quick, Seed: o.Seed, Started: time.Now(), SuiteWall: map[string]string{}}
	rep.Machine = machine()
	var mu sync.Mutex
	ticker := func(suite string, total int) func() {
		done := 0
		if o.Progress != nil {
			o.Progress(suite, 0, total)
		}
		return func() {
			mu.Lock()
			defer mu.Unlock()
			done++
			if o.Progress != nil {
				o.Progress(suite, min(done, total), total)
			}
		}
	}
	for _, name := range Suites {
		if !slices.Contains(chosen, name) {
			continue
		}
		start := time.Now()
		var err error
		switch name {
		case "fidelity":
			rep.Fidelity, err = runFidelity(ctx, o, ticker(name, fidelityUnits()))
		case "strategies":
			rep.Strategies, err = runStrategies(ctx, o, ticker(name, strategiesUnits()))
		case "scale":
			rep.Scale, err = runScale(ctx, o, ticker(name, scaleUnits(o.Quick)))
		case "real":
			rep.Real, err = runReal(ctx, o, ticker(name, realUnits()))
		case "guarantee":
			rep.Guarantee, err = runGuarantee(ctx, o, ticker(name, guaranteeUnits()))
		case "cost":
			rep.Cost, err = runCost(ctx, o, ticker(name, costUnits()))
		case "observe":
			rep.Observe, err = runObserve(ctx, o, ticker(name, observeUnits(o.Quick)))
		case "engine":
			rep.EngineCost, err = runEngine(ctx, o, ticker(name, engineUnits(o.Quick)))
		case "goals":
			rep.Felt, err = runFelt(ctx, o, ticker(name, feltUnits()))
		case "decompose":
			rep.Decompose, err = runDecompose(ctx, o, ticker(name, decomposeUnits(o.Quick)))
		case "matching":
			rep.Matching, err = runMatching(ctx, o, ticker(name, matchingUnits(o.Quick)))
		}
		if err != nil {
			rep.take(name, &Report{}) // a failed suite's figures are not measured ones
			rep.finish()
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			return rep, fmt.Errorf("benchmarks: suite %s: %w", name, err)
		}
		rep.SuiteWall[name] = time.Since(start).Round(100 * time.Millisecond).String()
	}
	rep.finish()
	return rep, nil
}

// finish records the run's wall time, the load after it and the goals
// of the suites it holds.
func (r *Report) finish() {
	r.Wall = time.Since(r.Started)
	r.Machine.LoadAfter = loadavg()
	r.Goals = goals(r)
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, LoadBefore: loadavg(), GCPercent: gcPercent(), GCPolicy: gcpolicy.Describe()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// gcPercent is the garbage collector's current target (GOGC; -1 when off).
func gcPercent() int {
	if gcpolicy.Floor() != 0 {
		return 100 // the policy's percent above its floor; below it, tuned per collection
	}
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int(int64(s[0].Value.Uint64()))
}
