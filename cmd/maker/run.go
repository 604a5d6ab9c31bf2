package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mdap-go/mdap/maker"
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
}

func (f *runFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	def := sim.DefaultConfig()
	fs.StringVar(&f.model, "model", "sim", "model: "+models.Specs)
	fs.StringVar(&f.baseURL, "base-url", "", "server URL for openai: (any OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1) or ollama:")
	fs.DurationVar(&f.timeout, "timeout", models.DefaultTimeout, "time limit of one model call")
	fs.IntVar(&f.k, "k", vote.DefaultK, "voting margin: a step is decided when one answer leads every other by k votes")
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
}

// validate checks what flag parsing cannot. Errors are usage errors.
func (f *runFlags) validate() error {
	switch {
	case f.k < 1:
		return usageErr("--k %d: the margin must be at least 1", f.k)
	case f.parallel < 0:
		return usageErr("--parallel %d: must be 0 (default) or more", f.parallel)
	case f.maxSamples < 0 || f.maxErrors < 0:
		return usageErr("--max-samples and --max-errors must be 0 (default) or more")
	case f.maxTokens < 1:
		return usageErr("--max-tokens %d: must be at least 1", f.maxTokens)
	case f.resume && f.journal == "":
		return usageErr("--resume needs --journal FILE")
	case f.progress != "auto" && f.progress != "on" && f.progress != "off":
		return usageErr("--progress %q: use auto, on or off", f.progress)
	case f.model != "sim" && f.latency != 0:
		return usageErr("--latency applies to --model sim only")
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
func (f *runFlags) solver(oracle sim.Oracle) (*maker.Solver, error) {
	model, err := models.Open(f.model, models.Options{BaseURL: f.baseURL, Timeout: f.timeout, Sim: func() (llms.Model, error) {
		return sim.New(oracle, f.simConfig())
	}})
	if err != nil {
		return nil, usageErr("--model: %w", err)
	}
	s := &maker.Solver{
		Model:        model,
		MaxTokens:    f.maxTokens,
		Vote:         vote.Config{K: f.k, Parallel: f.parallel, MaxSamples: f.maxSamples, MaxErrors: f.maxErrors},
		RerunPending: f.rerunPending,
	}
	if _, err := s.Vote.WithDefaults(); err != nil {
		return nil, usageErr("%w", err)
	}
	if f.journal != "" {
		var j *maker.Journal
		if f.resume {
			j, err = maker.OpenJournal(f.journal)
		} else {
			j, err = maker.CreateJournal(f.journal)
		}
		if err != nil {
			return nil, usageErr("--journal: %w", err)
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
