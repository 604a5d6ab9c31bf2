package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/tmc/langchaingo/llms"
)

// OwnRun is what the runner gives a Unit's Run: the job's journal and
// the shared provider limits.
type OwnRun struct {
	// Journal is the job's journal file in the Store's state folder
	// (created when absent, resumed when present); "" without a Store.
	Journal string
	// JournalUnsigned is the Store's UnsignedJournals.
	JournalUnsigned bool
	// JournalStore, if set (Runner.DecisionStore), keeps the job's
	// decision journal instead of Journal's file; the Run closes it.
	JournalStore journal.Store
	// Wrap wraps a model with the Runner's Limits (every call of every job
	// shares them); it returns the model itself without Limits.
	Wrap func(llms.Model) llms.Model
}

// decompositionKinds counts the decomposition tasks a line names.
func decompositionKinds(job Job) int {
	n := job.families
	if n == 0 && job.Family != "" {
		n = 1
	}
	if job.Problem != nil {
		n++
	}
	return n
}

// checkDecomposition checks a family's line's problem ("multiply",
// "sort") with its family, and the overrides that do not apply to it.
func checkDecomposition(job Job) error {
	kind := job.Kind()
	if kind == "problem" {
		_, err := problemSpec(job)
		if err == nil && (job.MaxSteps != nil || job.Root != nil || job.Tools != nil) {
			err = errors.New(`"max_steps", "root" and "tools" are not for a "problem" task`)
		}
		return err
	}
	if job.Family == "" {
		return nil
	}
	fam, err := problems.Lookup(kind)
	if err != nil {
		return err
	}
	var cerr error
	if p := catch.Try(func() { _, cerr = fam.Canon(job.FamilyInput) }); p != nil {
		cerr = fmt.Errorf("%v", p.Value)
	}
	switch {
	case cerr != nil:
		return fmt.Errorf("%q: %w", kind, cerr)
	case job.MaxSteps != nil, job.Root != nil, job.Tools != nil:
		return fmt.Errorf(`"max_steps", "root" and "tools" are not for a %q task`, kind)
	}
	return nil
}

// problemSpec loads a "problem" line's spec (relative to the line's
// folder) and checks its input with it.
func problemSpec(job Job) (*problems.Spec, error) {
	p := job.Problem
	switch {
	case p.Spec == "":
		return nil, errors.New(`"problem" needs "spec": "FILE.json", a problem spec`)
	case p.Input == nil || string(bytes.TrimSpace(p.Input)) == "null":
		return nil, errors.New(`"problem" needs "input": the problem, as the spec's "input" schema says`)
	}
	s, err := problems.LoadSpec(job.Path(p.Spec))
	if err != nil {
		return nil, fmt.Errorf(`"problem": %w`, err)
	}
	var cerr error
	if pe := catch.Try(func() { _, cerr = s.AsFamily().Canon(p.Input) }); pe != nil {
		cerr = fmt.Errorf("%v", pe.Value)
	}
	if cerr != nil {
		return nil, fmt.Errorf(`"problem": %s: %w`, p.Spec, cerr)
	}
	return s, nil
}

// decomposition builds a family's job ("multiply", "sort") or a "problem" job: problems.Solve with
// b.Decompose, the job's "k" for every role and "max_samples" per
// decision, on RoleModels' models or the simulated model of every role
// (b.DecomposeSim) at the job's seed.
func (b *Builtin) decomposition(job Job, seed uint64, maxSamples int) (*Unit, error) {
	o := problems.Options{Settings: b.Decompose, Sim: b.DecomposeSim, Logger: b.Logger}
	o.Settings.Seed, o.Sim.Seed = seed, seed
	o.Settings.Solver.MaxTokens, o.Settings.Solver.Price = b.MaxTokens, b.Price
	if maxSamples != 0 {
		o.Settings.Solver.Vote.MaxSamples = maxSamples
	}
	if job.K != nil {
		o.Settings.K = map[decompose.Role]int{}
		for _, r := range decompose.Roles {
			o.Settings.K[r] = *job.K
		}
	}
	if b.RoleModels != nil {
		ms, err := b.RoleModels(job)
		if err != nil {
			return nil, err
		}
		o.Models = ms
	}
	input := job.FamilyInput
	solve := func(ctx context.Context) (*decompose.Result, error) { return problems.Solve(ctx, job.Kind(), input, o) }
	if job.Problem != nil {
		s, err := problemSpec(job)
		if err != nil {
			return nil, err
		}
		input = job.Problem.Input
		solve = func(ctx context.Context) (*decompose.Result, error) { return problems.SolveSpec(ctx, s, input, o) }
	}
	return &Unit{Run: func(ctx context.Context, run OwnRun, r *Result) error {
		o.Journal, o.JournalStore, o.JournalUnsigned, o.Wrap = run.Journal, run.JournalStore, run.JournalUnsigned, run.Wrap
		out, err := solve(ctx)
		if out != nil {
			for _, st := range out.Roles {
				r.Steps += st.Decisions
			}
			r.Samples, r.Cost = out.Samples, out.Cost
			r.Answer, r.Correct, r.Unprotected, r.Resumed = out.Answer, out.Correct, out.Unprotected, out.Resumed
			r.K = out.Plan.K[decompose.RoleSolve]
		}
		if m := o.Models[decompose.RoleSolve]; m != nil {
			r.Model = maker.ModelIdentity(m)
		} else {
			r.Model = "sim"
		}
		switch {
		case err != nil && errors.Is(err, decompose.ErrJournalRollback):
			r.Status, r.Error = StatusInvalid, fmt.Sprintf("%s: %s", job.Where(), err)
		case err != nil && (errors.Is(err, decompose.ErrJournalMismatch) || errors.Is(err, decompose.ErrJournalCorrupt)):
			r.Status, r.Error = StatusInvalid, fmt.Sprintf("%s: %s; the task's line changed since its journal was written: restore the line, or remove %s to start the task over", job.Where(), err, r.Journal)
		case err != nil && (errors.Is(err, decompose.ErrInput) || errors.Is(err, decompose.ErrConfig) || errors.Is(err, decompose.ErrPlan) || errors.Is(err, problems.ErrNoTruth)):
			r.Status, r.Error = StatusInvalid, fmt.Sprintf("%s: %s", job.Where(), err)
		case err != nil:
			r.Status, r.Error = StatusFailed, err.Error()
		case out.Correct == nil && job.Kind() == "problem": // a spec without a checker: answered, not checked
			r.Status = StatusSolved
		case out.Correct == nil || !*out.Correct:
			r.Status, r.Error = StatusFailed, "the answer is wrong"
		default:
			r.Status = StatusSolved
		}
		return err
	}}, nil
}

// runOwn runs a Unit's Run and records its result; a job stopped by ctx
// or by a fault outside it gets none (it resumes from its journal).
func (r *Runner) runOwn(ctx context.Context, job Job, unit *Unit, res *Result, record func() (Result, bool, error)) (Result, bool, error) {
	run := OwnRun{Wrap: func(m llms.Model) llms.Model { return m }}
	if r.Limits != nil {
		run.Wrap = r.Limits.Wrap
	}
	if r.Store != nil {
		run.Journal, run.JournalUnsigned = r.Store.JournalPath(job), r.Store.UnsignedJournals
		if run.Journal != "" {
			res.Journal = r.rel(run.Journal)
		}
	}
	var err error
	if r.DecisionStore != nil {
		if run.JournalStore, err = r.DecisionStore(job); err != nil {
			switch {
			case ctx.Err() != nil:
				return *res, false, nil // stopped: it resumes from its journal
			case r.fault(err):
				return *res, false, faultErr(job, err)
			}
			res.Status, res.Error = StatusFailed, err.Error()
			return record()
		}
		run.Journal, run.JournalUnsigned, res.Journal = "", r.UnsignedDecisions, run.JournalStore.Name()
	}
	if p := catch.Try(func() { err = unit.Run(ctx, run, res) }); p != nil {
		err = fmt.Errorf("%w: %v", ErrJobPanic, p.Value)
		res.Status, res.Error = StatusFailed, err.Error()
	}
	if stopped(ctx, err) {
		return *res, false, nil
	}
	if r.fault(err) {
		return *res, false, faultErr(job, err)
	}
	return record()
}
