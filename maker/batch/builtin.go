package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// ErrBuiltin: a Builtin was given a job it cannot run (a "task" line),
// or has no Model function.
var ErrBuiltin = errors.New("job not runnable by the built-in builder")

// Builtin builds the jobs `maker solve` runs: Towers of Hanoi ("hanoi")
// and spec tasks ("spec"), each with its own solver on a model from Model,
// with the run's settings overridden by the job's own; and the problems
// of the built-in families ("multiply", "sort": problems.Builtins),
// solved by voted decomposition (maker/problems).
type Builtin struct {
	// Model returns the model of a job. oracle answers the job's prompts
	// for the simulated model (sim.New(oracle, ...)); seed is the job's
	// seed ("seed", else Seed). It may return one shared model for every
	// job. Required.
	Model func(job Job, oracle sim.Oracle, seed uint64) (llms.Model, error)
	// Config is every job's maker.Solver.Config. A job's "k",
	// "max_samples" and "max_errors" replace Vote.K, Vote.MaxSamples and
	// Vote.MaxErrors ("max_errors" 0 is vote.NoErrors: none tolerated),
	// Vote.Parallel is capped at the job's k, and its "max_steps"
	// replaces MaxSteps (0: no limit; a spec's own max_steps still holds).
	// Escalation, if set, is what a contested step of a "hanoi" or "spec"
	// job gets: with maker.EscalateModel and no Model of its own, each
	// job's escalation model is EscalationModel's.
	maker.Config
	// Seed is the simulated model's seed of a job without "seed".
	Seed uint64
	// Root is the folder granted to a spec task's file tools; a job's
	// "root" replaces it; "" means the spec file's folder. The tools
	// work in the spec's "root" inside it (see spec.OpenFile).
	Root string
	// Tools is the tool policy, a --tools list; a job's "tools" replaces
	// it; "" means the read-only categories.
	Tools string
	// Budget, if set, is every job's maker.Solver.Budget: one spending
	// cap for the whole batch.
	Budget *budget.Budget
	// Logger is every solver's logger.
	Logger *slog.Logger
	// Observer, if set, is every solver's maker.Solver.Observer (traces
	// and metrics: see maker/observe).
	Observer maker.Observer
	// EscalationModel is called as Model is, with the job's seed plus
	// one (so that a simulated model's hard steps are other steps than
	// the run's), for an Escalation of maker.EscalateModel without a Model.
	EscalationModel func(job Job, oracle sim.Oracle, seed uint64) (llms.Model, error)
	// Decompose are the settings of "multiply" and "sort" jobs (voted
	// decomposition: T, each role's p for the plan, strategy, caps); a
	// job's "k" fixes every role's k and "seed" replaces Seed.
	Decompose decompose.Settings
	// DecomposeSim is the simulated model of every role of those jobs
	// (each role's p, rivals, co-failure share), when RoleModels is nil;
	// its Seed is the job's.
	DecomposeSim decompose.SimConfig
	// RoleModels, if set, returns the role models of a "multiply" or
	// "sort" job (decompose.AllRoles(m) for one model).
	RoleModels func(job Job) (map[decompose.Role]llms.Model, error)
}

// Build implements Builder. Errors: ErrBuiltin; a spec that does not
// load (the file system's error, spec.ErrSpec); a tool policy, root or
// vote configuration that is refused; Model's error.
func (b *Builtin) Build(_ context.Context, job Job) (*Unit, error) {
	if b.Model == nil {
		return nil, fmt.Errorf("%w: no Model function", ErrBuiltin)
	}
	cfg := b.Vote
	if job.K != nil {
		cfg.K = *job.K
	}
	if job.MaxSamples != nil {
		cfg.MaxSamples = *job.MaxSamples
	}
	if job.MaxErrors != nil {
		cfg.MaxErrors = *job.MaxErrors
		if cfg.MaxErrors == 0 {
			cfg.MaxErrors = vote.NoErrors // "max_errors": 0 tolerates none
		}
	}
	k := cfg.K
	if k == 0 {
		k = vote.DefaultK
	}
	if cfg.Parallel > k {
		cfg.Parallel = k
	}
	if cfg.MaxSamples != 0 && cfg.MaxSamples < k {
		return nil, fmt.Errorf("max_samples %d is below k %d: no step could be decided; give at least k", cfg.MaxSamples, k)
	}
	if _, err := cfg.WithDefaults(); err != nil {
		return nil, err
	}
	seed := b.Seed
	if job.Seed != nil {
		seed = *job.Seed
	}
	maxSteps := b.MaxSteps
	if job.MaxSteps != nil {
		maxSteps = *job.MaxSteps
	}
	// solver is the job's Solver, whole: a spec job's executor and the
	// tools it declares, none for hanoi.
	solver := func(oracle sim.Oracle, ex *executor.Executor, tools []llms.Tool) (*maker.Solver, error) {
		m, err := b.Model(job, oracle, seed)
		if err != nil {
			return nil, err
		}
		esc := b.Escalation
		if esc != nil && esc.Policy == maker.EscalateModel && esc.Model == nil && b.EscalationModel != nil {
			e := *esc
			if e.Model, err = b.EscalationModel(job, oracle, seed+1); err != nil {
				return nil, fmt.Errorf("escalation model: %w", err)
			}
			esc = &e
		}
		c := b.Config
		c.Vote, c.MaxSteps, c.Escalation = cfg, maxSteps, esc
		return &maker.Solver{
			Config:   c,
			Model:    m,
			Executor: ex,
			Tools:    tools,
			Logger:   b.Logger,
			Observer: b.Observer,
			Budget:   b.Budget,
		}, nil
	}

	if job.Family != "" || job.Problem != nil {
		return b.decomposition(job, seed, cfg.MaxSamples)
	}
	switch job.Kind() {
	case "hanoi":
		task, err := hanoi.New(job.Hanoi.Disks)
		if err != nil {
			return nil, err
		}
		s, err := solver(hanoi.Oracle{}, nil, nil)
		if err != nil {
			return nil, err
		}
		return &Unit{Task: task, Solver: s, Finish: func(r *Result) {
			r.State = json.RawMessage(compact(task.State().String()))
			if r.Status == StatusSolved && !task.Solved() {
				r.Status = StatusFailed
				r.Error = fmt.Sprintf("not solved: %d wrong steps", task.WrongSteps())
			}
		}}, nil
	case "spec":
		root, tools := b.Root, b.Tools
		if job.Root != nil {
			root = job.Path(*job.Root)
		}
		if job.Tools != nil {
			tools = *job.Tools
		}
		st, err := spec.OpenFileInput(job.Path(job.Spec), root, tools, job.Input)
		if err != nil {
			return nil, err
		}
		s, err := solver(spec.Oracle{Spec: st.Spec}, st.Executor, st.Tools)
		if err != nil {
			st.Close()
			return nil, err
		}
		return &Unit{Task: st.Task, Solver: s, Close: st.Close, Finish: func(r *Result) {
			r.State = st.Task.State()
		}}, nil
	case "task":
		return nil, fmt.Errorf(`%w: a "task" line needs a library Builder of its own; this one runs "spec" and "hanoi" tasks`, ErrBuiltin)
	}
	return nil, fmt.Errorf("%w: the job has no task", ErrBuiltin)
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return `"` + s + `"`
	}
	return b.String()
}
