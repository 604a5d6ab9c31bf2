package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/spf13/cobra"
	"github.com/tmc/langchaingo/llms"
)

// calibrateFlags are maker calibrate's own flags, beside runFlags (the
// model, the sim, --target) and toolFlags (a spec's tools).
type calibrateFlags struct {
	disks        int
	specFile     string
	stepsSampled int
	samples      int
	stepsSeed    uint64
	confidence   float64
	concurrency  int
	withRivals   bool
	asJSON       bool
	declaration  string
	untilDecided bool
	untilSamples int
}

// notForCalibrate are the run flags that decide steps, which a calibration
// does not do.
var notForCalibrate = []string{"journal", "journal-unsigned", "resume", "rerun-pending", "parallel", "max-samples", "max-errors", "k-floor", "k-max", "verbose", "escalate", "escalate-after", "escalate-k", "escalate-model"}

func newCalibrate() *cobra.Command {
	var (
		flags runFlags
		tools toolFlags
		c     calibrateFlags
	)
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Estimate p on sampled steps: k_min and the expected cost before a run",
		Long: `calibrate does the first step of the paper's workflow before a run is paid for:
it samples --steps-sampled steps of the task at random, builds each on its own
in its true state (a microagent is stateless, so any step can be asked alone),
asks the model --samples times on each, exactly as a run would (the same
prompt, reply cap, temperatures and red flags, and the same requests: with
--samples-per-call, a step's samples go several to a request as a run's
wave of them would, sample 0 at temperature 0 a request of its own, one a
request once the provider is seen to ignore n), and compares every valid
reply with the step's correct answer.

It reports, per model (several --model make an ensemble) and for the ensemble:
  p        the share of valid replies that are right, with an interval at
           --confidence on the mean per-step p: each sampled step is a
           cluster of a beta-binomial fit (the interval widens when some
           steps are harder than others)
  hard steps  sampled steps whose majority answer was wrong
  red flags  by reason, and provider errors
  wrong answers repeat  how often two wrong replies to one step agree: 100%
           means one favourite wrong answer (correlated errors: the scaling
           laws' one rival is then exact); low means errors spread
  k_min    for the whole task (all its steps) at --target: the smallest k
           whose whole-run success reaches --target at every point of the
           --confidence region of (mean p, spread of step difficulty), the
           run's success averaged over a Beta distribution of per-step p at
           each point; a spread the samples cannot detect is not taken as
           none. With it the whole-run success it prints is a lower bound
           (under that model of difficulty, each step's errors to one rival
           answer), beside the estimate at the fit, and the expected samples
           and cost per step and in all (costs need --price-in and
           --price-out)
  undecided  when the region holds both a k that reaches --target and none
           (or the safe k is more than twice the most hopeful one), there is
           no k_min: it says how many more sampled steps would settle it and
           exits 1; --until-decided samples them (in rounds, each forecast
           on stderr first, within --until-max-samples and --max-cost)
  no k     when no k reaches --target anywhere in the region (hard steps, or
           p not above 1/2), it says so, names what helps (a checker, a
           stronger model, ...) and exits 1

The task is Towers of Hanoi with --disks (the run maker hanoi --disks would
make), or a spec file's task with --spec (its script gives the correct
replies; its tool calls run under --root and --tools as in maker run).`,
		Example: `  maker calibrate --disks 20                          # the simulated model, the paper's p
  maker calibrate --disks 20 --p 0.99 --wrong-answers 1 --json
  maker calibrate --disks 20 --model openai:gpt-4.1-mini --price-in 0.4 --price-out 1.6
  maker calibrate --spec testdata/spec/find-version.json --samples 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			for _, name := range notForCalibrate {
				if fs.Changed(name) {
					return usageErr("--%s does not apply to maker calibrate: it decides no step, it samples them", name)
				}
			}
			flags.usesTarget = true
			if err := flags.validate(cmd); err != nil {
				return err
			}
			switch {
			case flags.kAuto:
				return usageErr("--k auto does not apply to maker calibrate: give a fixed --k to see what it would give, or none")
			case c.stepsSampled < 1 || c.stepsSampled > calibrate.MaxStepsSampled:
				return usageErr("--steps-sampled %d: use 1 to %d", c.stepsSampled, calibrate.MaxStepsSampled)
			case c.samples < 1 || c.samples > calibrate.MaxSamples:
				return usageErr("--samples %d: use 1 to %d", c.samples, calibrate.MaxSamples)
			case c.stepsSampled*c.samples > calibrate.MaxDraws:
				return usageErr("--steps-sampled %d times --samples %d: at most %d samples in all", c.stepsSampled, c.samples, calibrate.MaxDraws)
			case !(c.confidence > 0 && c.confidence < 1):
				return usageErr("--confidence %v: use a probability above 0 and below 1, such as 0.95", c.confidence)
			case c.concurrency < 1 || c.concurrency > calibrate.MaxParallel:
				return usageErr("--concurrency %d: use 1 to %d", c.concurrency, calibrate.MaxParallel)
			case c.untilSamples < 1 || c.untilSamples > calibrate.MaxDraws:
				return usageErr("--until-max-samples %d: use 1 to %d", c.untilSamples, calibrate.MaxDraws)
			case fs.Changed("until-max-samples") && !c.untilDecided:
				return usageErr("--until-max-samples caps --until-decided: give --until-decided too, or leave it out")
			case c.untilDecided && c.untilSamples < min(c.stepsSampled, calibrate.MaxStepsSampled)*c.samples:
				return usageErr("--until-max-samples %d is below the first round's %d samples (--steps-sampled times --samples): raise it", c.untilSamples, c.stepsSampled*c.samples)
			case fs.Changed("disks") && c.specFile != "":
				return usageErr("--disks and --spec: give one task, Towers of Hanoi (--disks) or a spec file (--spec)")
			case c.specFile == "" && (c.disks < 1 || c.disks > maxDisks):
				return usageErr("--disks %d: use 1 to %d", c.disks, maxDisks)
			case c.specFile == "" && (fs.Changed("root") || fs.Changed("tools") || fs.Changed("tool-declaration")):
				return usageErr("--root, --tools and --tool-declaration apply to --spec only: Towers of Hanoi has no tools")
			}
			decl, err := maker.ParseToolDeclaration(c.declaration)
			if err != nil {
				return usageErr("--tool-declaration: %w", err)
			}
			var (
				steps    calibrate.Steps
				oracle   sim.Oracle = hanoi.Oracle{}
				declared []llms.Tool
			)
			if c.specFile != "" {
				sp, err := spec.Load(c.specFile)
				if err != nil {
					return usageErr("--spec: %w", err)
				}
				if !fs.Changed("root") {
					tools.root = filepath.Join(filepath.Dir(c.specFile), sp.Root)
				}
				e, err := tools.executor()
				if err != nil {
					return err
				}
				defer e.Close()
				if steps, err = calibrate.Spec(sp, e); err != nil {
					return usageErr("--spec %s: %w", c.specFile, err)
				}
				// The run's declaration, so that p is measured on the
				// prompts the run will send.
				if declared, err = spec.Declare(sp, e, os.DirFS(filepath.Dir(c.specFile))); err != nil {
					return usageErr("--spec %s: %w", c.specFile, err)
				}
				oracle = spec.Oracle{Spec: sp}
			} else if steps, err = calibrate.Hanoi(c.disks); err != nil {
				return usageErr("--disks: %w", err)
			}
			s, err := flags.solver(oracle, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			s.Tools, s.ToolDeclaration = declared, decl

			cfg := calibrate.Config{
				Steps: steps, Solver: s, StepsSampled: c.stepsSampled, Samples: c.samples, Seed: c.stepsSeed,
				Target: flags.target, Confidence: c.confidence, Parallel: c.concurrency, WithRivals: c.withRivals,
				SamplesPerCall: flags.perCall,
			}
			if fs.Changed("k") {
				cfg.K = flags.k
			}
			bar := &roundBar{flags: &flags, w: cmd.ErrOrStderr()}
			bar.start(min(c.stepsSampled, steps.Total()) * c.samples)
			cfg.Progress = bar.progress
			if c.untilDecided {
				cfg.UntilDecided, cfg.MaxSamples, cfg.MaxCost = true, c.untilSamples, flags.maxCost
				cfg.Forecast = func(r calibrate.Round) {
					bar.finish()
					fmt.Fprintln(cmd.ErrOrStderr(), forecastLine(r))
					bar.start(r.Samples)
				}
			}
			rep, runErr := calibrate.Run(cmd.Context(), cfg)
			bar.finish()
			if runErr != nil && cmd.Context().Err() != nil {
				return interrupted("")
			}
			if runErr != nil && (len(rep.Models) == 0 || errors.Is(runErr, calibrate.ErrBudget)) {
				return failed(runErr)
			}
			out := cmd.OutOrStdout()
			if c.asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				_ = enc.Encode(rep) // a failed write fails the command (see run)
			} else {
				fmt.Fprint(out, rep.String())
				fmt.Fprint(out, ranking(rep.Models)) // cost.go
			}
			if runErr != nil {
				return failed(runErr)
			}
			switch {
			case rep.All.Unreachable, rep.All.Undecided: // the report says why; so does the exit
				msg := rep.All.NoK
				if rep.Stopped != "" {
					msg += "; --until-decided stopped: " + rep.Stopped
				}
				return failed(errors.New(msg))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&c.disks, "disks", 10, fmt.Sprintf("Towers of Hanoi with N disks (2^N-1 steps, the run k_min is planned for), 1 to %d", maxDisks))
	fs.StringVar(&c.specFile, "spec", "", "calibrate on a spec FILE's task instead (its script gives each step's correct reply)")
	fs.IntVar(&c.stepsSampled, "steps-sampled", calibrate.DefaultStepsSampled, "number of distinct steps sampled at random (all of them if the task has fewer)")
	fs.IntVar(&c.samples, "samples", calibrate.DefaultSamples, "samples per sampled step")
	fs.Uint64Var(&c.stepsSeed, "steps-seed", 1, "seed of the choice of steps (the same seed, the same steps)")
	fs.Float64Var(&c.confidence, "confidence", calibrate.DefaultConfidence, "confidence of the interval on p, in (0, 1)")
	fs.IntVar(&c.concurrency, "concurrency", calibrate.DefaultParallel, "model calls in flight at once")
	fs.BoolVar(&c.asJSON, "json", false, "print the report as JSON on stdout")
	fs.StringVar(&c.declaration, "tool-declaration", "auto", "with --spec: how the spec's tools are declared to the model, as maker run declares them (native, prompt, both, or auto); use the run's choice, so p is measured on the run's prompts")
	fs.BoolVar(&c.untilDecided, "until-decided", false, "while the plan is undecided, sample more (new steps, then more samples per step) in rounds, each forecast on stderr before it draws, until it is decided or a cap stops it (--until-max-samples, and --max-cost in dollars); each look plans over a stricter region so that all of them keep --confidence")
	fs.IntVar(&c.untilSamples, "until-max-samples", calibrate.DefaultMaxSamples, "with --until-decided: the most samples drawn in all, the first round's included")
	fs.BoolVar(&c.withRivals, "with-rivals", false, "also plan with the wrong answers spread as measured (exact laws with rivals; can take seconds)")
	flags.register(cmd)
	tools.register(cmd, "")
	fs.Lookup("root").Usage = `with --spec: folder the file tools work in (default: the spec's "root", else the spec file's folder)`
	fs.Lookup("target").Usage = "probability that the whole run succeeds that k_min is planned for, in (0, 1), at every point of the --confidence region of (mean p, spread of step difficulty); exit 1 when no k reaches it or the samples cannot tell (undecided)"
	fs.Lookup("k").Usage = "also show what this margin would give"
	fs.Lookup("max-cost").Usage = "spending cap in US dollars for the calibration: a sample whose worst case (prompt plus --max-tokens) would pass it is not started, and calibrate stops there with exit 1 and the dollars spent (0: no cap)"
	fs.Lookup("k").DefValue = ""
	for _, name := range notForCalibrate {
		_ = fs.MarkHidden(name) // refused if given: see RunE
	}
	return cmd
}

// roundBar is a progress bar of samples per round of calibration: the
// rounds of --until-decided each get their own.
type roundBar struct {
	flags *runFlags
	w     io.Writer
	mu    sync.Mutex
	set   func(done, total int)
	end   func()
}

func (b *roundBar) start(total int) {
	set, end := samplesBar(b.flags, b.w, total)
	b.mu.Lock()
	b.set, b.end = set, end
	b.mu.Unlock()
}

// progress is Config.Progress: safe for concurrent use.
func (b *roundBar) progress(done, total int) {
	b.mu.Lock()
	set := b.set
	b.mu.Unlock()
	if set != nil {
		set(done, total)
	}
}

func (b *roundBar) finish() {
	b.mu.Lock()
	end := b.end
	b.set, b.end = nil, nil
	b.mu.Unlock()
	if end != nil {
		end()
	}
}

// forecastLine is --until-decided's note before a round.
func forecastLine(r calibrate.Round) string {
	want := "the forecast cannot tell how many more samples would settle it"
	if r.Forecast > 0 {
		want = fmt.Sprintf("the forecast says about %d more samples would settle it", r.Forecast)
	}
	cost := ""
	if r.Cost > 0 || r.SpentSoFar > 0 {
		cost = fmt.Sprintf(", ~$%.4f (spent $%.4f)", r.Cost, r.SpentSoFar)
	}
	return fmt.Sprintf("maker calibrate: undecided after %d samples; %s; look %d (region at %.4g%%): %d samples (%d new steps, %d more per sampled step)%s",
		r.SamplesSoFar, want, r.Look, 100*r.RegionConfidence, r.Samples, r.NewSteps, r.ExtraSamplesEach, cost)
}

// samplesBar returns a Progress callback drawing a bar of total samples on
// w, as --progress says, and the function that ends it.
func samplesBar(f *runFlags, w io.Writer, total int) (func(done, total int), func()) {
	bar := f.newBar(w, total, "samples")
	if bar == nil {
		return nil, func() {}
	}
	var mu sync.Mutex
	return func(done, _ int) {
			mu.Lock()
			defer mu.Unlock()
			_ = bar.Set(done)
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			_ = bar.Finish()
		}
}
