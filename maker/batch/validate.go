package batch

import (
	"fmt"
	"os"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// MaxConcurrency bounds Runner.Concurrency, against typos.
const MaxConcurrency = 1024

// Validate checks the run-wide settings of b before any job is built and
// returns nil or a *maker.FieldError (wrapping ErrConfig) naming the first
// refused field, its value and the fix: a negative MaxSteps or MaxTokens,
// a SamplesPerCall outside maker's, a Root that is not a folder, a Tools selection or a
// ToolDeclaration that does not parse (the parser's error still found
// with errors.Is), or a Vote that vote.Config.WithDefaults refuses (its
// own error), or an Escalation that maker.Config.Validate refuses (its
// field error, "Escalation.Policy"; EscalateModel needs a Model or
// EscalationModel). Model is not checked (Build refuses a missing one). A job's
// overrides are checked when it is built. A command maps the field names
// to its flags (maker solve does). Cost: one stat of Root.
func (b *Builtin) Validate() error {
	const where = "batch.Builtin"
	switch {
	case b.MaxSteps < 0:
		return fielderr.New(where, "MaxSteps", b.MaxSteps, "use 1 or more, or 0 for no limit")
	case b.MaxTokens < 0:
		return fielderr.New(where, "MaxTokens", b.MaxTokens, "use 1 or more, or 0 for the default")
	case b.SamplesPerCall < maker.SamplesPerCallAuto || b.SamplesPerCall > maker.MaxSamplesPerCall:
		return fielderr.New(where, "SamplesPerCall", b.SamplesPerCall, fmt.Sprintf("use maker.SamplesPerCallAuto, or 0 to %d", maker.MaxSamplesPerCall))
	}
	if _, err := categories.Builtin().ParseSelection(b.Tools); err != nil {
		return fielderr.Of(where, "Tools", b.Tools, err)
	}
	if _, err := maker.ParseToolDeclaration(string(b.ToolDeclaration)); err != nil {
		return fielderr.Of(where, "ToolDeclaration", string(b.ToolDeclaration), err)
	}
	if b.Root != "" {
		if fi, err := os.Stat(b.Root); err != nil || !fi.IsDir() {
			return fielderr.New(where, "Root", b.Root, "not a folder; name an existing folder, or leave it empty to use each spec's own")
		}
	}
	if _, err := b.Vote.WithDefaults(); err != nil {
		return fmt.Errorf("batch.Builtin: Vote: %w", err)
	}
	if e := b.Escalation; e != nil {
		c := *e
		if c.Model == nil && b.EscalationModel != nil {
			c.Model = standIn{} // each job's, not called here
		}
		return maker.Config{Escalation: &c}.Validate()
	}
	return nil
}

// CheckSharedEscalation refuses, before any job runs, an escalation model
// that is the run's own (maker.Escalation.ModelFor), when Model and
// EscalationModel each return one model shared by every job; a caller
// whose models are opened per job (the simulated model at each job's
// seed) leaves it out, as each job's Solver checks its own. It opens both
// for a stand-in job, at Seed and Seed+1. Errors: Model's,
// EscalationModel's, or ModelFor's (wrapping maker.ErrConfig). Cost: the
// two model functions' and an identity per member.
func (b *Builtin) CheckSharedEscalation() error {
	if b.Escalation == nil || b.Escalation.Policy != maker.EscalateModel || b.EscalationModel == nil {
		return nil
	}
	m, err := b.Model(Job{}, nil, b.Seed)
	if err != nil {
		return err
	}
	esc := *b.Escalation
	if esc.Model, err = b.EscalationModel(Job{}, nil, b.Seed+1); err != nil {
		return err
	}
	_, err = esc.ModelFor(m)
	return err
}

// standIn stands for a model Build opens, in a setting checked before.
type standIn struct{ llms.Model }

// Validate checks r's settings and returns nil or a *maker.FieldError
// (wrapping ErrConfig): no Build function, or a Concurrency below 0 or
// above MaxConcurrency. Run calls it. Cost: O(1).
func (r *Runner) Validate() error {
	const where = "batch.Runner"
	switch {
	case r.Build == nil:
		return &fielderr.Error{Config: where, Fields: []fielderr.Field{{Name: "Build", Value: nil}}, Fix: "give the function that builds each job's solver"}
	case r.Concurrency < 0 || r.Concurrency > MaxConcurrency:
		return fielderr.New(where, "Concurrency", r.Concurrency, fmt.Sprintf("use 1 to %d", MaxConcurrency))
	}
	return nil
}
