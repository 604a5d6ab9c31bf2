package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// decompFlags are the flags of maker multiply, sort and problem: the
// models of the roles, the plan (T, p, k per role) and the journal, set
// straight into problems.Config (c), whose Options checks them;
// problems.Solve runs the tree.
type decompFlags struct {
	c          problems.Config
	roleP      map[decompose.Role]*float64
	roleModels roleFlags
	asJSON     bool
	ui         uiFlag
}

// decompSimFlags are the simulated model's flags, refused with a real one.
var decompSimFlags = []string{"rivals", "cofailure", "flag-rate", "latency"}

func (f *decompFlags) register(fs *pflag.FlagSet) {
	f.c = problems.DefaultConfig()
	c := &f.c
	flagbind.Usage{"specs": models.Specs}.Bind(fs, c)
	fs.StringVar(&c.Open.BaseURL, "base-url", "", "server URL of an openai: model (the API root, usually ending in /v1; Ollama: http://127.0.0.1:11434/v1) or an ollama: model (the server root)")
	fs.DurationVar(&c.Open.Timeout, "timeout", c.Open.Timeout, "time limit of one model call")
	f.roleP = map[decompose.Role]*float64{}
	for _, r := range decompose.Roles {
		f.roleP[r] = fs.Float64("p-"+string(r), 0, fmt.Sprintf("the %s role's p, over --p (0: --p)", r))
	}
	fs.BoolVar(&f.asJSON, "json", false, "print a JSON summary on stdout")
	f.roleModels = registerRoleFlags(fs, "", "; a real model, as --model's for the other roles")
}

// options maps the flags to problems.Options (problems.Config.Options).
// Errors are usage errors.
func (f *decompFlags) options(fs *pflag.FlagSet) (problems.Options, error) {
	c := f.c
	c.RoleP, c.Models.Roles = map[decompose.Role]float64{}, f.roleModels.specs()
	for r, p := range f.roleP {
		if fs.Changed("p-" + string(r)) {
			c.RoleP[r] = *p
		}
	}
	for _, name := range decompSimFlags {
		if fs.Changed(name) && !c.Models.Sim() {
			return problems.Options{}, usageErr("--%s is a setting of the simulated model; it does not apply to --model %s", name, strings.Join(c.Models.Models, ", "))
		}
	}
	o, err := c.Options()
	return o, fieldUsageErr(err, decompFlagOf, "settings")
}

// solveProblem runs problems.Solve on input with the flags, prints the
// summary and returns the command's error: a usage error (exit 2, nothing
// written) for bad input or flags, a failure (exit 1) for a run that failed
// or gave a wrong answer, interrupted (130) on a signal.
func (f *decompFlags) solveProblem(cmd *cobra.Command, family string, input json.RawMessage, what string) error {
	return f.solveWith(cmd, family, what, false, func(ctx context.Context, o problems.Options) (*decompose.Result, error) {
		return problems.Solve(ctx, family, input, o)
	})
}

// solveWith is solveProblem with the run given: solve, named family in
// errors; unchecked says that an answer without a check (a problem spec
// without a checker) is solved.
func (f *decompFlags) solveWith(cmd *cobra.Command, family, what string, unchecked bool, solve func(context.Context, problems.Options) (*decompose.Result, error)) error {
	o, err := f.options(cmd.Flags())
	if err != nil {
		return err
	}
	stopUI, err := f.ui.attachDecomposition(cmd, family, f.c.Journal)
	if err != nil {
		return err
	}
	defer stopUI()
	ctx := cmd.Context()
	res, err := solve(ctx, o)
	switch {
	case problems.IsInputError(err):
		return fieldUsageErr(err, decompFlagOf, family)
	case res == nil:
		return failed(cmp.Or(err, errors.New("no result")))
	}
	sum := problems.Summarize(res, err, unchecked)
	out := cmd.OutOrStdout()
	if f.asJSON {
		if werr := writeJSON(out, sum); werr != nil {
			return werr
		}
	} else {
		sum.WriteText(out, what, f.c.Models.Models)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return interrupted(f.c.Journal)
	case err != nil:
		return failed(err)
	case !sum.Solved:
		return failed(fmt.Errorf("not solved: %w", problems.ErrWrong))
	}
	return nil
}

// decompFlagOf names the flag of each field of decompose.Settings (its
// tags') and problems.Config the flags set, for fieldUsageErr; the
// simulated model's fields (P, FlagRate, Latency, ...) are left out, so
// that their errors name the role they come from.
var decompFlagOf = withRoleModels(flagbind.Names(map[string]string{"P": "p", "Prices": "price", "Journal": "journal", "Resume": "resume", "K": "k",
	"P[atomic]": "p-atomic", "P[decompose]": "p-decompose", "P[discriminate]": "p-discriminate", "P[solve]": "p-solve", "P[compose]": "p-compose",
	"Roles[atomic].CoFailure": "cofailure", "Roles[decompose].CoFailure": "cofailure", "Roles[discriminate].CoFailure": "cofailure",
	"Roles[solve].CoFailure": "cofailure", "Roles[compose].CoFailure": "cofailure"}, decompose.Settings{}))

// decompCommand is a command of voted decomposition (multiply, sort,
// problem): its help texts, the decomposition flags and --ui; solve runs
// it once the flags are parsed.
func decompCommand(use, short, long, example string, f *decompFlags, solve func(cmd *cobra.Command) error) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Example: example, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return solve(cmd) }}
	f.register(cmd.Flags())
	f.ui.register(cmd)
	_ = cmd.MarkFlagFilename("journal", "jsonl")
	return cmd
}

// familyCommands are the commands of the built-in families
// (problems.Builtins): maker multiply, maker sort, one per family.
func familyCommands() []*cobra.Command {
	var out []*cobra.Command
	for _, b := range problems.Builtins() {
		out = append(out, newFamilyCommand(b))
	}
	return out
}

// newFamilyCommand is family b's command: its problem from its input
// flags (all or none), or a seeded one of its size flag (b.FlagInput).
func newFamilyCommand(b problems.Builtin) *cobra.Command {
	var (
		f      decompFlags
		inputs = make([]string, len(b.Flags))
		size   int
	)
	name, long, ex := b.Name(), b.Long, b.Examples
	if _, err := helpFiles.ReadFile("help/" + name + ".txt"); err == nil {
		long, ex = help(name), example(name) // a family with help files of its own
	}
	cmd := decompCommand(name, b.Short, long, ex, &f, func(cmd *cobra.Command) error {
		given := map[string]string{}
		for i, in := range b.Flags {
			if cmd.Flags().Changed(in.Name) {
				given[in.Name] = inputs[i]
			}
		}
		input, err := b.FlagInput(given, cmd.Flags().Changed(b.Size.Flag), f.c.Settings.Seed, size)
		if err != nil {
			return usageErr("%w", err)
		}
		return f.solveProblem(cmd, name, input, b.Headline(input))
	})
	for i, in := range b.Flags {
		cmd.Flags().StringVar(&inputs[i], in.Name, "", in.Usage)
	}
	cmd.Flags().IntVar(&size, b.Size.Flag, b.Size.Default, b.Size.Usage)
	return cmd
}

// decompBatch sets how maker solve runs "multiply", "sort" and "problem"
// lines: on the simulated model of every role, at --p and --wrong-answers
// when they are given (else decompose's defaults), or every role on the
// --model. Over --nats every role's model is the engine's remote model
// of the --model's route (the workers draw the samples); with --model
// sim, the route of the workers playing the line's family (simRoles).
func decompBatch(run *runFlags, roles roleFlags, b *batch.Builtin, fs *pflag.FlagSet) {
	play := rolesPlay(run, fs)
	switch {
	case run.nats.URL != "" && slices.Contains(run.Models, "sim"):
		b.Decompose.P = decompose.EveryRole(play.P)
		b.RoleModels = run.drawer.SimRoleModels(simRoles(run, fs), b.Seed, run.oneModel(), run.cfg.Price.InputPerMillion, run.cfg.Price.OutputPerMillion)
	case slices.Contains(run.Models, "sim"):
		b.DecomposeSim.Roles, b.Decompose.P = problems.SimRoles(play), decompose.EveryRole(play.P)
	default:
		model := b.Model
		b.RoleModels = func(job batch.Job) (map[decompose.Role]llms.Model, error) {
			m, err := model(job, nil, 0)
			if err != nil {
				return nil, err
			}
			ms := decompose.AllRoles(m)
			return ms, roles.solveRoleModels(run, ms) // --model-ROLE
		}
	}
}
