package runsetup

import (
	"math"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/all"
	"github.com/mdap-go/mdap/maker/models/credentials"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/tmc/langchaingo/llms"
)

// Run is what a run's models are opened from, as a command line gives
// it: the model specs, how their clients open, the Settings (their
// prices and escalation model among them), the simulated model's rates
// and seed, and the spending cap. [Run.OpenModels] opens the models,
// [Run.OpenEscalation] the escalation policy's, [Run.JobModels] a
// batch's; none of them checks the settings (Models.Check,
// Run.Validate and maker.Config.Validate do). [Run.Solver] builds a
// run's Solver of them.
//
// Its fields are tagged with their flags (internal/flagbind; Models'
// usage has a {specs}, models.Specs), Settings' and Sim's with theirs.
type Run struct {
	// Models are the model specs: one model, or an ensemble of several
	// (all.Open).
	Models []string `flag:"model" usage:"model: {specs}; give it several times for an ensemble (samples go to the models in turn)"`
	// Client is how each client opens (the server URL of a spec without
	// ;base=, the call timeout, the connection pool); its Sim and prices
	// are Run's to set.
	Client models.Options
	// Settings are the run's settings; their InputPrice and OutputPrice
	// price every model whose spec gives no price, when given.
	Settings Settings `flags:""`
	// Sim is the simulated model's rates and seed; Settings add its
	// latency and drift (SimConfig).
	Sim sim.Config `flags:""`
	// InputPriceGiven and OutputPriceGiven say the Settings' prices were
	// given: they then replace a model's built-in list price (a 0 too).
	InputPriceGiven, OutputPriceGiven bool
	// MaxCost is the spending cap in dollars; 0 is none.
	MaxCost float64 `flag:"max-cost" usage:"spending cap in US dollars for the whole run (solve: every task, over every run of the batch): a call whose worst case (prompt plus --max-tokens per choice) would pass it is not started, and the run stops undecided (exit 1); resume with a larger cap (0: no cap)"`
}

// Validate checks Run's own fields, then its Settings
// (Settings.Validate): a positive Client.Timeout, a finite MaxCost of 0
// or more. The models are Models.Check's to check, Sim sim.Config's.
//
// Errors: a *fielderr.Error wrapping fielderr.ErrConfig, naming the
// field ("Client.Timeout", "MaxCost", or the Settings' own). Cost: O(1).
func (r Run) Validate() error {
	switch {
	case r.Client.Timeout <= 0:
		return fielderr.New("runsetup.Run", "Client.Timeout", r.Client.Timeout, "must be a positive duration such as 30s or 2m")
	case !(r.MaxCost >= 0) || math.IsInf(r.MaxCost, 0):
		return fielderr.New("runsetup.Run", "MaxCost", r.MaxCost, "use a number of US dollars, or 0 for no cap")
	}
	return r.Settings.Validate()
}

// SimConfig is the simulated model's config: Sim with the Settings'
// latency and drift (Settings.Sim).
func (r Run) SimConfig() sim.Config { return r.Settings.Sim(r.Sim) }

// OpenModels opens the Models as one model (an ensemble when there are
// several) with Client and the given prices; the simulated model answers
// oracle with SimConfig at seed. Opening makes no call.
//
// Errors: all.Open's (no spec, a spec refused, a missing API key), the
// spec it names first; sim.New's for the simulated model.
func (r Run) OpenModels(oracle sim.Oracle, seed uint64) (llms.Model, error) {
	o := r.Client
	o.Sim = func() (llms.Model, error) {
		c := r.SimConfig()
		c.Seed = seed
		return sim.New(oracle, c)
	}
	if r.InputPriceGiven {
		o.InputPrice = &r.Settings.InputPrice
	}
	if r.OutputPriceGiven {
		o.OutputPrice = &r.Settings.OutputPrice
	}
	return all.Open(r.Models, o)
}

// OpenEscalation opens the escalation model (Settings.Escalation.Model)
// as OpenModels opens the Models, the simulated model at Sim.Seed+1 so
// that its hard steps are other steps than the run's; nil, and no error,
// without one. Errors are OpenModels'.
func (r Run) OpenEscalation(oracle sim.Oracle) (llms.Model, error) {
	if r.Settings.Model == "" {
		return nil, nil
	}
	return r.With(r.Settings.Model).OpenModels(oracle, r.Sim.Seed+1)
}

// Route is the model as workers and coordinators meet on it over NATS
// (maker/cluster): the one spec of Models, or for the simulated model its
// identity answering oracle (its seed and every setting that changes an
// answer). Errors: sim.New's.
func (r Run) Route(oracle sim.Oracle) (string, error) {
	if r.Models[0] != "sim" {
		return r.Models[0], nil
	}
	m, err := sim.New(oracle, r.SimConfig())
	if err != nil {
		return "", err
	}
	return m.Identity(), nil
}

// With is r with the model specs specs in place of its Models.
func (r Run) With(specs ...string) Run {
	r.Models = specs
	return r
}

// JobModels is a batch's model function (batch.Builtin.Model): with the
// simulated model among the Models, each job's models opened for its
// oracle and seed; else the models opened once now and shared by every
// job. Errors, now or of a job, are OpenModels'.
func (r Run) JobModels() (func(batch.Job, sim.Oracle, uint64) (llms.Model, error), error) {
	if slices.Contains(r.Models, "sim") {
		return func(_ batch.Job, oracle sim.Oracle, seed uint64) (llms.Model, error) {
			return r.OpenModels(oracle, seed)
		}, nil
	}
	m, err := r.OpenModels(nil, r.Sim.Seed)
	return func(batch.Job, sim.Oracle, uint64) (llms.Model, error) { return m, err }, err
}

// Budget is the run's spending cap (budget.New), nil without MaxCost.
func (r Run) Budget() *budget.Budget {
	if r.MaxCost <= 0 {
		return nil
	}
	return budget.New(r.MaxCost)
}

// Shown names the Models as a summary shows them, comma-separated,
// each without its secrets (credentials.ShownSpec).
func (r Run) Shown() string {
	shown := make([]string, len(r.Models))
	for i, m := range r.Models {
		shown[i] = credentials.ShownSpec(m)
	}
	return strings.Join(shown, ", ")
}
