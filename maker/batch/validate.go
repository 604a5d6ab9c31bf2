package batch

import (
	"fmt"
	"os"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// MaxConcurrency bounds Runner.Concurrency, against typos.
const MaxConcurrency = 1024

// Validate checks the run-wide settings of b before any job is built and
// returns nil or a *maker.FieldError (wrapping ErrConfig) from
// "batch.Builtin" naming the first refused field, its value and the fix:
// a Config that maker.Config.Validate refuses (by its path: "MaxSteps",
// "Vote.K", "Escalation.Policy"; a Vote's error still found with
// errors.Is; EscalateModel needs a Model or EscalationModel), a
// SamplesPerCall above maker.MaxSamplesPerCall, a Root that is not a
// folder, or a Tools selection that does not parse (the parser's error
// still found with errors.Is). Model is not checked (Build refuses a
// missing one). A job's overrides are checked when it is built. A command
// maps the field names to its flags (maker solve does). Cost: one stat of
// Root.
func (b *Builtin) Validate() error {
	const where = "batch.Builtin"
	if b.SamplesPerCall > maker.MaxSamplesPerCall {
		return fielderr.New(where, "SamplesPerCall", b.SamplesPerCall, fmt.Sprintf("use maker.SamplesPerCallAuto, or 0 to %d", maker.MaxSamplesPerCall))
	}
	if _, err := selection.Parse(categories.Builtin(), b.Tools); err != nil {
		return fielderr.Of(where, "Tools", b.Tools, err)
	}
	if b.Root != "" {
		if fi, err := os.Stat(b.Root); err != nil || !fi.IsDir() {
			return fielderr.New(where, "Root", b.Root, "not a folder; name an existing folder, or leave it empty to use each spec's own")
		}
	}
	c := b.Config
	if e := c.Escalation; e != nil && e.Model == nil && b.EscalationModel != nil {
		esc := *e
		esc.Model, c.Escalation = standIn{}, &esc // each job's, not called here
	}
	err := c.Validate()
	if fe := fielderr.As(err); fe != nil {
		out := *fe
		out.Config = where
		return &out
	}
	return err
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
