package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/tmc/langchaingo/llms"
	"golang.org/x/term"
)

// runFlags are the flags of every command that runs a task: the model, the
// vote, the red flags and the journal.
type runFlags struct {
	model, baseURL       string
	k, parallel          int
	kAuto                bool    // --k auto: maker.AdaptiveK
	target               float64 // --target: of --k auto and maker calibrate
	kFloor, kMax         int
	usesTarget           bool // the command reads --target without --k auto (calibrate)
	maxSamples           int
	maxErrors            int
	maxTokens            int
	seed                 uint64
	p, flagRate          float64
	errorRate            float64
	concentration        float64
	wrongAnswers         int
	latency              time.Duration
	latencySigma         float64
	journal              string
	resume, rerunPending bool
	progress             string
	timeout              time.Duration
	natsRun              // --nats: samples drawn by workers, journals on the engine (nats.go)
}

func (f *runFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	def := sim.DefaultConfig()
	fs.StringVar(&f.model, "model", "sim", "model: "+models.Specs)
	fs.StringVar(&f.baseURL, "base-url", "", "server URL for openai: (any OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1) or ollama:")
	fs.DurationVar(&f.timeout, "timeout", models.DefaultTimeout, "time limit of one model call")
	f.k = vote.DefaultK
	fs.Var(&kValue{k: &f.k, auto: &f.kAuto}, "k", "voting margin: a step is decided when one answer leads every other by k votes; auto: each step's k from the run's own votes (see --target)")
	fs.Float64Var(&f.target, "target", calibrate.DefaultTarget, "with --k auto: probability that every step is decided right, in (0, 1)")
	fs.IntVar(&f.kFloor, "k-floor", maker.DefaultKFloor, "with --k auto: smallest k, at least 2 (at k=1 no vote disagrees with its winner, so p cannot be estimated)")
	fs.IntVar(&f.kMax, "k-max", maker.DefaultKMax, "with --k auto: largest k, the first step's (nothing is known yet)")
	fs.IntVar(&f.parallel, "parallel", 0, "most samples in flight per step (default k; 1 is the paper's sequential rule)")
	fs.IntVar(&f.maxSamples, "max-samples", 0, fmt.Sprintf("valid plus red-flagged samples per step before the step fails (default %d*k)", vote.DefaultSamplesPerK))
	fs.IntVar(&f.maxErrors, "max-errors", 0, fmt.Sprintf("provider errors tolerated per step (default %d)", vote.DefaultMaxErrors))
	fs.IntVar(&f.maxTokens, "max-tokens", maker.DefaultMaxTokens, "reply cap in tokens; a longer reply is red-flagged")
	fs.Uint64Var(&f.seed, "seed", 1, "simulated model: seed of every random draw")
	fs.Float64Var(&f.p, "p", def.P, "simulated model: probability that a valid reply is right")
	fs.Float64Var(&f.flagRate, "flag-rate", def.FlagRate, "simulated model: probability of a red-flag reply (overlong, cut off, malformed)")
	fs.Float64Var(&f.errorRate, "error-rate", 0, "simulated model: probability of a provider error")
	fs.IntVar(&f.wrongAnswers, "wrong-answers", def.WrongAnswers, "simulated model: distinct wrong answers the errors spread over (1 = all errors alike)")
	fs.Float64Var(&f.concentration, "concentration", 0, "simulated model: probability that a wrong reply is the most common wrong answer")
	fs.DurationVar(&f.latency, "latency", 0, "simulated model: latency of a call (the median, with --latency-sigma)")
	fs.Float64Var(&f.latencySigma, "latency-sigma", 0, "simulated model: lognormal spread of latency (0 = fixed)")
	fs.StringVar(&f.journal, "journal", "", "journal FILE: one JSON line per decided step, to resume from")
	fs.BoolVar(&f.resume, "resume", false, "resume the run recorded in --journal")
	fs.BoolVar(&f.rerunPending, "rerun-pending", false, "on --resume, run again a side-effect tool call that was pending at the crash")
	fs.StringVar(&f.progress, "progress", "auto", "progress bar on stderr: auto (when stderr is a terminal), on or off")
	f.registerNATS(fs)
}

// simFlags are the flags of the simulated model, refused with a real one.
var simFlags = []string{"seed", "p", "flag-rate", "error-rate", "wrong-answers", "concentration", "latency", "latency-sigma"}

// validate checks every flag and the defaulted configuration they make,
// before anything is created: a refused command writes nothing. Errors
// are usage errors that name the flag and its allowed range.
func (f *runFlags) validate(cmd *cobra.Command) error {
	fs := cmd.Flags()
	if err := f.validateK(fs); err != nil {
		return err
	}
	switch {
	case !f.kAuto && (f.k < 1 || f.k > maxK):
		return usageErr("--k %d: use 1 to %d, or auto", f.k, maxK)
	case f.parallel < 0 || f.parallel > f.kBound():
		return usageErr("--parallel %d: use 1 to --k (%d), or 0 for k: a race never has more than k samples in flight beyond its lead, so more would do nothing", f.parallel, f.kBound())
	case f.maxSamples < 0 || f.maxSamples > maxSamplesFlag:
		return usageErr("--max-samples %d: use 0 (%d*k) or a number from --k (%d) to %d", f.maxSamples, vote.DefaultSamplesPerK, f.kBound(), maxSamplesFlag)
	case f.maxSamples != 0 && f.maxSamples < f.kBound():
		return usageErr("--max-samples %d: must be at least --k (%d), or no step could be decided", f.maxSamples, f.kBound())
	case f.maxErrors < 0 || f.maxErrors > maxSamplesFlag:
		return usageErr("--max-errors %d: use 0 (%d) or a number up to %d", f.maxErrors, vote.DefaultMaxErrors, maxSamplesFlag)
	case f.maxTokens < 1 || f.maxTokens > maxTokensFlag:
		return usageErr("--max-tokens %d: use 1 to %d", f.maxTokens, maxTokensFlag)
	case f.timeout <= 0:
		return usageErr("--timeout %s: must be a positive duration such as 30s or 2m", f.timeout)
	case fs.Changed("journal") && f.journal == "":
		return usageErr("--journal \"\": give the journal's file name")
	case f.resume && f.journal == "":
		return usageErr("--resume needs --journal FILE: the journal of the run to resume")
	case f.rerunPending && !f.resume:
		return usageErr("--rerun-pending applies to --resume only: it finishes the pending tool call of a resumed run")
	case f.progress != "auto" && f.progress != "on" && f.progress != "off":
		return usageErr("--progress %q: use auto, on or off", f.progress)
	}
	if err := f.validateNATS(cmd); err != nil {
		return err
	}
	if f.baseURL != "" {
		if err := checkBaseURL(f.baseURL); err != nil {
			return err
		}
	}
	if err := models.CheckSpec(f.model); err != nil {
		return usageErr("--model %q: %w", f.model, err)
	}
	if f.model != "sim" {
		for _, name := range simFlags {
			if fs.Changed(name) {
				return usageErr("--%s applies to --model sim only; a real model (%s) has its own behaviour", name, f.model)
			}
		}
	} else {
		probability := func(name string, v float64, lowOpen bool) error {
			if !(v >= 0 && v <= 1) || (lowOpen && v == 0) {
				lo := "0 to 1"
				if lowOpen {
					lo = "above 0, up to 1"
				}
				return usageErr("--%s %v: use a probability %s", name, v, lo)
			}
			return nil
		}
		for _, err := range []error{
			probability("p", f.p, true),
			probability("flag-rate", f.flagRate, false),
			probability("error-rate", f.errorRate, false),
			probability("concentration", f.concentration, false),
		} {
			if err != nil {
				return err
			}
		}
		switch {
		case f.flagRate+f.errorRate > 1:
			return usageErr("--flag-rate %v plus --error-rate %v: must add up to at most 1", f.flagRate, f.errorRate)
		case f.wrongAnswers < 1 || f.wrongAnswers > 1<<20:
			return usageErr("--wrong-answers %d: use 1 (every error alike) to %d", f.wrongAnswers, 1<<20)
		case f.latency < 0:
			return usageErr("--latency %s: must be 0 (none) or positive", f.latency)
		case !(f.latencySigma >= 0) || math.IsInf(f.latencySigma, 0):
			return usageErr("--latency-sigma %v: use a finite number of 0 (fixed latency) or more", f.latencySigma)
		case f.latencySigma > 0 && f.latency == 0:
			return usageErr("--latency-sigma needs --latency (the median)")
		}
		if err := f.simConfig().Validate(); err != nil { // a backstop: the checks above say it better
			return usageErr("simulated model: %w", err)
		}
	}
	if _, err := f.voteConfig().WithDefaults(); err != nil {
		return usageErr("--k, --parallel, --max-samples or --max-errors: %w", err)
	}
	return nil
}

// Bounds of the run flags, against typos.
const (
	maxK           = 1000
	maxSamplesFlag = 1 << 24
	maxTokensFlag  = 1 << 20
)

func (f *runFlags) voteConfig() vote.Config {
	return vote.Config{K: f.k, Parallel: f.parallel, MaxSamples: f.maxSamples, MaxErrors: f.maxErrors}
}

// checkBaseURL refuses a --base-url that no client could use, before any
// client is built (langchaingo's Ollama client exits the process on one).
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return usageErr("--base-url %q: %v; want http://HOST:PORT or https://HOST/PATH", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return usageErr("--base-url %q: the scheme must be http or https, as in http://127.0.0.1:11434", raw)
	case u.Host == "":
		return usageErr("--base-url %q: no host; want http://HOST:PORT or https://HOST/PATH", raw)
	}
	return nil
}

func (f *runFlags) simConfig() sim.Config {
	c := sim.DefaultConfig()
	c.Seed, c.P, c.FlagRate, c.ErrorRate = f.seed, f.p, f.flagRate, f.errorRate
	c.WrongAnswers, c.Concentration = f.wrongAnswers, f.concentration
	switch {
	case f.latency > 0 && f.latencySigma > 0:
		c.Latency = sim.LognormalLatency(f.latency, f.latencySigma)
	case f.latency > 0:
		c.Latency = sim.FixedLatency(f.latency)
	}
	return c
}

// solver builds the solver the flags describe, with its journal. The
// caller closes the journal.
func (f *runFlags) solver(oracle sim.Oracle, stderr io.Writer) (*maker.Solver, error) {
	var model llms.Model
	var err error
	if f.natsURL != "" {
		if model, err = f.natsModel(oracle, stderr); err != nil {
			return nil, err
		}
	} else {
		model, err = models.Open(f.model, models.Options{BaseURL: f.baseURL, Timeout: f.timeout, Sim: func() (llms.Model, error) {
			return sim.New(oracle, f.simConfig())
		}})
		if err != nil {
			return nil, usageErr("--model: %w", err)
		}
	}
	s := &maker.Solver{
		Model:        model,
		MaxTokens:    f.maxTokens,
		Vote:         f.voteConfig(),
		RerunPending: f.rerunPending,
	}
	if strings.HasPrefix(f.journal, natsJournalPrefix) {
		if s.Journal, err = f.natsJournal(stderr); err != nil {
			return nil, err
		}
	} else if f.journal != "" {
		var j *maker.Journal
		if f.resume {
			j, err = maker.OpenJournal(f.journal)
		} else {
			j, err = maker.CreateJournal(f.journal)
		}
		if err != nil {
			return nil, usageErr("--journal: %w", err)
		}
		if n := j.TornBytes(); n > 0 {
			fmt.Fprintf(stderr, "maker: note: %s ends with a torn line of %s (a write cut short by a crash); it is dropped and that step decided again\n", f.journal, plural(n, "byte"))
		}
		s.Journal = j
	}
	return s, nil
}

// progressBar returns a Progress callback drawing a bar on w for total
// steps, or nil when the flags or the terminal say no.
func (f *runFlags) progressBar(w io.Writer, total int) (func(maker.Event), func()) {
	show := f.progress == "on"
	if f.progress == "auto" {
		file, ok := w.(*os.File)
		show = ok && term.IsTerminal(int(file.Fd()))
	}
	if !show {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("steps"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("steps"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	return func(e maker.Event) { _ = bar.Set(e.Step + 1) }, func() { _ = bar.Finish() }
}

// runErr turns a journal error met while solving into a usage error
// (the user gave a journal that does not fit), others into a failure.
func runErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, maker.ErrJournalMismatch), errors.Is(err, maker.ErrJournalCorrupt), errors.Is(err, maker.ErrPendingSideEffect):
		return usageErr("--journal: %w", err)
	}
	return failed(err)
}

// isUsage reports whether err is a usage error (exit status 2).
func isUsage(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.code == exitUsage
}
