package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/credentials"
	"github.com/mdap-go/mdap/maker/progress"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// runFlags are the flags of every command that runs a task: the model, the
// vote, the red flags and the journal.
type runFlags struct {
	// Run holds the models and the run's settings but the guards and the
	// journal (validate sets them in cfg, with what the commands add).
	runsetup.Run
	usesTarget   bool // the command reads --target without --k auto (calibrate)
	cfg          maker.Config
	jnl          runsetup.Journal // --journal, --resume, --resume-or-start, --journal-unsigned, --rerun-pending; PerTask: maker solve's
	natsRun                       // --nats: samples drawn by workers, journals on the engine (nats.go)
	modelsFile   string           // --models FILE (modelsfile.go)
	modelsLoaded bool
	obs          watchFlags
	guards       runsetup.Guards // --write-k, --flag-alarm, --self-correction, --tool-first (flagsguard.go)
	guardsOn     bool            // the command reads them
	endBar       func()          // ends a watched solver's progress bar (solver sets it)
}

func (f *runFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	f.Sim, f.Settings = sim.DefaultConfig(), runsetup.DefaultSettings()
	f.Sim.Seed, f.Settings.Target = 1, calibrate.DefaultTarget
	f.Models = []string{"sim"}
	flagbind.Usage{"specs": models.Specs}.Bind(fs, &f.Run) // with its Settings and Sim
	flagbind.Bind(fs, &f.jnl)
	fs.StringVar(&f.Client.BaseURL, "base-url", "", "server URL: for openai: the API root, usually ending in /v1 (Ollama: http://127.0.0.1:11434/v1; default $OPENAI_BASE_URL, else OpenAI); for ollama: the server root (http://127.0.0.1:11434; default $OLLAMA_HOST)")
	fs.DurationVar(&f.Client.Timeout, "timeout", models.DefaultTimeout, "time limit of one model call")
	f.registerNATS(fs)
	f.registerCost(fs)
	f.registerGuards(cmd)
	_ = cmd.RegisterFlagCompletionFunc("progress", cobra.FixedCompletions(progress.Modes, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("model", completeModel)
	_ = cmd.MarkFlagFilename("journal", "jsonl")
}

// completeModel completes --model (runsetup.SpecsFrom).
func completeModel(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	return runsetup.SpecsFrom(prefix), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// simFlags are the flags of the simulated model, refused with a real one.
var simFlags = []string{"seed", "p", "flag-rate", "error-rate", "wrong-answers", "concentration", "latency", "latency-sigma", "difficulty-spread", "hard-agree", "p-late", "p-change-at"}

// onlyWith are the flags that apply only with another setting (off: the
// setting is not there), which a usage error names: "--k-max applies to
// --k auto only". Their values are the settings' to check.
var onlyWith = []struct {
	flags     []string
	off       func(f *runFlags) bool
	with, why string
}{
	{[]string{"escalate-after", "escalate-k", "escalate-model"}, func(f *runFlags) bool { return f.Settings.Policy == "" }, "--escalate", ""},
	{[]string{"escalate-k"}, func(f *runFlags) bool { return f.Settings.Policy != maker.EscalateRaiseK }, "--escalate raise-k", ""},
	{[]string{"k-floor", "k-max"}, func(f *runFlags) bool { return !f.Settings.Margin.Auto }, "--k auto", ""},
	{[]string{"target"}, func(f *runFlags) bool { return !f.Settings.Margin.Auto && !f.usesTarget }, "--k auto",
		" (with a fixed --k, see maker calibrate or maker kmin for the k a target needs)"},
}

// validate checks every flag and the settings they make, before anything
// is created: a refused command writes nothing. The rules of the flags
// alone (which go together, a 0 where the library reads its default) are
// here; the settings' own are their Validate's (runsetup's Run, Journal
// and Guards, sim.Config, maker.Config), their field errors said in flags.
func (f *runFlags) validate(cmd *cobra.Command) error {
	fs := cmd.Flags()
	f.InputPriceGiven, f.OutputPriceGiven = fs.Changed("price-in"), fs.Changed("price-out")
	f.Settings.Drift = fs.Changed("p-late")
	f.Settings.Apply(&f.cfg)
	f.cfg.RerunPending = f.jnl.RerunPending
	if err := f.loadModelsFile(fs, cmd.InOrStdin()); err != nil {
		return err
	}
	for _, r := range onlyWith {
		if name := given(fs, r.flags...); name != "" && r.off(f) {
			return usageErr("--%s applies to %s only%s", name, r.with, r.why)
		}
	}
	if err := fieldUsageErr(f.Run.Validate(), runFlagOf, "settings"); err != nil {
		return err
	}
	if err := f.validateGuards(fs); err != nil {
		return err
	}
	if err := positiveFlags(fs, "max-tokens"); err != nil {
		return err
	}
	if fs.Changed("journal") && f.jnl.Path == "" {
		return usageErr("--journal \"\": give the journal's file name")
	}
	if err := fieldUsageErr(f.jnl.Validate(), journalFlagOf, "--journal"); err != nil {
		return err
	}
	if err := f.validateNATS(cmd); err != nil {
		return err
	}
	if err := f.validateModels(cmd.Context()); err != nil {
		return err
	}
	if name := given(fs, simFlags...); name != "" && !slices.Contains(f.Models, "sim") {
		return usageErr("--%s applies to --model sim only; a real model (%s) has its own behaviour", name, strings.Join(f.Models, ", "))
	} else if err := f.validateSim(fs); err != nil {
		return err
	}
	// The task's steps are not known yet: a stand-in of one.
	return fieldUsageErr(f.CheckConfig(f.config(solverWith{steps: 1})), configFlagOf, "settings")
}

// validateSim checks the simulated model's flags: how they go together
// here, then sim.Config.Validate's rules, its errors said in flags.
func (f *runFlags) validateSim(fs *pflag.FlagSet) error {
	if f.Settings.Drift != fs.Changed("p-change-at") {
		return usageErr("--p-late and --p-change-at go together: --p-late P --p-change-at STEP")
	}
	if err := positiveFlags(fs, "wrong-answers"); err != nil { // 0 is 1 in sim.Config
		return err
	}
	return simUsageErr(f.SimConfig().Validate())
}

// simFlagOf names the flag of each sim.Config field the run flags set.
var simFlagOf = flagbind.Names(map[string]string{"Latency": "latency", "Latency.Median": "latency", "Latency.Sigma": "latency-sigma",
	"Drift[0].P": "p-late", "Drift[0].Step": "p-change-at"}, sim.Config{})

// runFlagOf names the flag of each runsetup.Run field (its Settings'
// too), journalFlagOf of each runsetup.Journal field.
var runFlagOf, journalFlagOf = flagbind.Names(map[string]string{"Client.Timeout": "timeout"}, runsetup.Run{}), flagbind.Names(nil, runsetup.Journal{})

// simUsageErr turns an error of sim.Config.Validate into a usage error
// that names the flags, their values and the fix: "--p 1.5: use a
// probability above 0, up to 1".
func simUsageErr(err error) error { return fieldUsageErr(err, simFlagOf, "simulated model") }

// fieldUsageErr turns the *maker.FieldError of a configuration the flags
// set into a usage error that names the flags, their values and the
// library's fix (fielderr.InFlags), so that the rules are the library's
// alone; an error of a field no flag sets, or of another kind, reads
// "what: err".
func fieldUsageErr(err error, flagOf map[string]string, what string) error {
	if err == nil {
		return nil
	}
	if text, ok := fielderr.InFlags(err, flagOf); ok {
		return usageErr("%s", text)
	}
	return usageErr("%s: %w", what, err)
}

// given is the first of names given on the command line, or "" (a name
// the command does not have is never given).
func given(fs *pflag.FlagSet, names ...string) string {
	for _, name := range names {
		if fs.Changed(name) {
			return name
		}
	}
	return ""
}

// positiveFlags refuses 0 for the named flags the command has, where the
// library reads a zero setting as its default (a negative value the
// library refuses, with its range).
func positiveFlags(fs *pflag.FlagSet, names ...string) error {
	for _, name := range names {
		if fl := fs.Lookup(name); fl == nil {
			continue
		} else if v := fl.Value.String(); v == "0" || v == "0s" {
			return usageErr("--%s %s: use a positive value, or leave the flag out for %s", name, v, fl.DefValue)
		}
	}
	return nil
}

// modelsFlagOf names the flag of each runsetup.Models field.
var modelsFlagOf = map[string]string{"Specs": "model", "BaseURL": "base-url", "Structured": "structured", "InputPrice": "price-in", "OutputPrice": "price-out"}

// validateModels checks the --model specs, the server URL each would use
// (--base-url, else the provider's environment variable), the prices and
// --structured (runsetup.Models.Check), and what --nats allows.
func (f *runFlags) validateModels(ctx context.Context) error {
	if f.nats.URL != "" && len(f.Models) > 1 {
		return usageErr("--model given %d times: --nats takes one model, the route its workers serve", len(f.Models))
	}
	if f.nats.URL != "" && f.cfg.Structured {
		return usageErr("--structured does not travel over --nats yet: the workers would not send the answer schema")
	}
	// What the models may send: each --model's and --escalate-model's
	// ;key=VAR value, a password in --base-url or ;base= (escalation
	// opens its model as a --model; its errors are escalation's).
	f.obs.redact(ctx, credentials.Of(models.Options{BaseURL: f.Client.BaseURL}, append(slices.Clone(f.Models), f.Settings.Model)...)...)
	m := runsetup.Models{Specs: f.Models, BaseURL: f.Client.BaseURL, Structured: f.Settings.Structured, InputPrice: f.Settings.InputPrice, OutputPrice: f.Settings.OutputPrice}
	return fieldUsageErr(m.Check(), modelsFlagOf, "--model")
}

// solverWith is what a command adds to the Solver its run flags
// describe.
type solverWith struct {
	// steps is the task's number of steps, for --k auto's policy (the
	// commands that leave it 0, calibrate and solve, refuse --k auto).
	steps int
	// executor runs a spec's tools; tools are those it declares, as
	// --tool-declaration (Config.ToolDeclaration) says.
	executor *executor.Executor
	tools    []llms.Tool
	// watch, the command's context if set, watches the run: telemetry
	// and readiness probes, the logger of --log-format json, a progress
	// bar of steps (with --verbose each red-flagged reply and provider
	// error) through the solver's Progress and OnSample. solver sets
	// runFlags.endBar, which ends the bar: call it once Solve returns.
	watch context.Context
}

// config is the run's settings (validate sets them) with what the
// command adds; its --escalate policy has no model (solver opens it). It
// does not check them: runsetup's CheckConfig and Solver do. --timeout
// bounds each call in the model's client (models.Options), not here.
func (f *runFlags) config(with solverWith) maker.Config {
	cfg := f.cfg
	cfg.Vote.MinVoters, cfg.AdaptiveK = f.minVoters, f.Settings.Adaptive(with.steps)
	return cfg
}

// configFlagOf names the flag of each maker.Config field the run flags
// set.
var configFlagOf = map[string]string{
	"Vote.K": "k", "Vote.Parallel": "parallel", "Vote.MaxSamples": "max-samples", "Vote.MaxErrors": "max-errors",
	"Vote.MinVoters": "min-workers", "MaxTokens": "max-tokens", "SamplesPerCall": "samples-per-call",
	"MaxSteps": "max-steps", "ToolDeclaration": "tool-declaration",
	"Price.InputPerMillion": "price-in", "Price.OutputPerMillion": "price-out",
	"AdaptiveK.Target": "target", "AdaptiveK.Floor": "k-floor", "AdaptiveK.Max": "k-max",
	"Escalation.Policy": "escalate", "Escalation.After": "escalate-after", "Escalation.K": "escalate-k",
	"FlagAlarm.Level": "flag-alarm-level", "FlagAlarm.History": "flag-alarm-history",
}

// solver builds the solver the flags describe (runsetup.Run.Solver:
// once and whole, nothing written before the settings pass), with what
// the command adds: its model over --nats, its executor and tools, and
// with with.watch its watchers. Its errors are usage errors naming the
// flag (setupErr). The caller closes the journal.
func (f *runFlags) solver(oracle sim.Oracle, stderr io.Writer, with solverWith) (*maker.Solver, error) {
	var model llms.Model // nil: the --model specs, opened by runsetup
	if f.nats.URL != "" {
		m, err := f.natsModel(oracle, stderr)
		if err != nil {
			return nil, err
		}
		model = m
	}
	s, err := f.Run.Solver(f.config(with), oracle, model, func() (*journal.Journal, error) { return f.openJournal(stderr) })
	if err != nil {
		return nil, setupErr(err)
	}
	s.Executor, s.Tools, s.MinVoters = with.executor, with.tools, f.followVoters
	if with.watch != nil {
		f.watchRun(&f.obs, s.Journal != nil)
		s.Logger, s.Observer = f.runLogger(&f.obs, stderr), f.obs.solverObserver()
		a := progress.NewRun(stderr, progress.RunConfig{Mode: f.Settings.Progress, Total: with.steps, Verbose: f.Settings.Verbose,
			Secrets: heldSecrets(with.watch), Cost: s.CostOf})
		f.endBar = a.Finish
		s.OnSample, s.Progress = a.Hooks()
		if f.drawer != nil { // after the bar's hooks: the engine's quarantine sees every sample
			s.OnSample, s.Progress = f.drawer.Hooks(s.OnSample, s.Progress)
		}
	}
	return s, nil
}

// setupPartFlag names the flag of each part of a runsetup.PartError, as
// the usage error's text begins: "--escalate-model: --model ...".
var setupPartFlag = map[string]string{"Models": "--model ", "Settings.Model": "--escalate-model: "}

// setupErr is an error of runsetup.Run.Solver as a usage error: a part
// that did not open after its flags, a refused setting's field as its
// flag (fieldUsageErr); the journal's (openJournal's) as it is.
func setupErr(err error) error {
	prefix := ""
	for pe := (*runsetup.PartError)(nil); errors.As(err, &pe); err = pe.Err {
		prefix += setupPartFlag[pe.Part]
	}
	var ee *exitError
	switch {
	case prefix != "":
		return usageErr("%s%w", prefix, err)
	case errors.As(err, &ee):
		return err
	}
	return fieldUsageErr(err, configFlagOf, "settings")
}

// openJournal opens --journal: created, or with --resume (or
// --resume-or-start and a journal there) opened to resume; nil without
// --journal.
func (f *runFlags) openJournal(stderr io.Writer) (*journal.Journal, error) {
	if strings.HasPrefix(f.jnl.Path, natsJournalPrefix) {
		return f.natsJournal(stderr)
	}
	j, torn, err := f.jnl.Open()
	if err != nil {
		return nil, usageErr("--journal: %w", err)
	}
	if torn > 0 {
		fmt.Fprintf(stderr, "maker: note: %s ends with a torn line of %s (a write cut short by a crash); it is dropped and that step decided again\n", f.jnl.Path, words.Plural(torn, "byte"))
	}
	return j, nil
}

// openModels opens the --model specs (runsetup.Run.OpenModels): one
// model, or an ensemble when there are several; the simulated model
// answers oracle (a spec's without a script is refused: sim.Checker).
func (f *runFlags) openModels(oracle sim.Oracle) (llms.Model, error) {
	m, err := f.OpenModels(oracle, f.Sim.Seed)
	if err != nil {
		return nil, usageErr("--model %w", err)
	}
	return m, nil
}

// oneModel is the --model spec of a command that takes one (--nats, maker
// worker: workers serve one model's route).
func (f *runFlags) oneModel() string { return f.Models[0] }

// runErr turns a journal error met while solving into a usage error
// (the user gave a journal that does not fit), others into a failure.
func runErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, journal.ErrMismatch), errors.Is(err, journal.ErrCorrupt), errors.Is(err, maker.ErrPendingSideEffect):
		return usageErr("--journal: %w", err)
	}
	return failed(err)
}

// isUsage reports whether err is a usage error (exit status 2).
func isUsage(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.code == exitUsage
}
