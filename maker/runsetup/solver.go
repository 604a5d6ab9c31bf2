package runsetup

import (
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/tmc/langchaingo/llms"
)

// PartError is an error of a part of a run that [Run.Solver] could not
// open, or that was refused: Part names the Run field it comes from
// ("Models", "Settings.Model"), so that a caller says it in its own
// terms (a command, by the part's flag). Err may be a PartError in turn:
// the escalation model opened as Models.
type PartError struct {
	Part string
	Err  error
}

// Error reads "Part: Err".
func (e *PartError) Error() string { return e.Part + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *PartError) Unwrap() error { return e.Err }

// Solver builds the Solver of a run with settings cfg once and whole,
// nothing written before the settings pass: its model is model, or when
// nil the Models (OpenModels at Sim.Seed); the escalation model
// (OpenEscalation) goes into cfg's policy (Settings.Apply sets one with
// the Settings' Model); cfg is checked by its
// Validate and an escalation model by Escalation.ModelFor against the
// run's; then the journal is opened by open (nil: none), and the Budget
// set. The caller adds the executor, tools and watchers, and closes the
// journal.
//
// Errors: a *PartError for the Models that did not open ("Models"), the
// escalation model that did not open (its Models' PartError inside
// "Settings.Model") or that ModelFor refused ("Settings.Model");
// cfg.Validate's *fielderr.Error and open's error as they are.
func (r Run) Solver(cfg maker.Config, oracle sim.Oracle, model llms.Model, open func() (*journal.Journal, error)) (*maker.Solver, error) {
	var err error
	if model == nil {
		if model, err = r.OpenModels(oracle, r.Sim.Seed); err != nil {
			return nil, &PartError{"Models", err}
		}
	}
	if esc, err := r.OpenEscalation(oracle); err != nil {
		return nil, &PartError{"Settings.Model", &PartError{"Models", err}}
	} else if esc != nil && cfg.Escalation != nil {
		e := *cfg.Escalation
		e.Model, cfg.Escalation = esc, &e
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if e := cfg.Escalation; e != nil && e.Policy == maker.EscalateModel {
		if _, err := e.ModelFor(model); err != nil {
			return nil, &PartError{"Settings.Model", err}
		}
	}
	s := &maker.Solver{Config: cfg, Model: model, Budget: r.Budget()}
	if open != nil {
		if s.Journal, err = open(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// CheckConfig checks cfg as Solver does, before any model is opened (a
// command refuses its settings before it writes anything): an
// escalation model the Settings name is stood in for, Validate never
// calling it. Errors: cfg.Validate's.
func (r Run) CheckConfig(cfg maker.Config) error {
	if r.Settings.Model != "" && cfg.Escalation != nil {
		e := *cfg.Escalation
		e.Model, cfg.Escalation = standIn{}, &e
	}
	return cfg.Validate()
}

// standIn stands in for a model not opened yet.
type standIn struct{ llms.Model }
