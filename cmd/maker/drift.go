package main

import (
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/pflag"
)

// driftFlags are the simulated model's drift: --p-late from step
// --p-change-at on (sim.Config.Drift).
type driftFlags struct {
	pLate    float64
	changeAt int
	given    bool // both flags were given (validate)
}

func (d *driftFlags) register(fs *pflag.FlagSet) {
	fs.Float64Var(&d.pLate, "p-late", 0, "simulated model: from step --p-change-at on, the probability that a valid reply is right (a model that drifts late in the run)")
	fs.IntVar(&d.changeAt, "p-change-at", 0, "simulated model: the step (from 0) where --p becomes --p-late")
}

// validate checks that --p-late and --p-change-at come together (their
// values are sim.Config.Validate's to check).
func (d *driftFlags) validate(fs *pflag.FlagSet) error {
	late, at := fs.Changed("p-late"), fs.Changed("p-change-at")
	if late != at {
		return usageErr("--p-late and --p-change-at go together: --p-late P --p-change-at STEP")
	}
	d.given = late
	return nil
}

// apply sets c's Drift.
func (d *driftFlags) apply(c *sim.Config) {
	if d.given {
		c.Drift = []sim.PChange{{Step: d.changeAt, P: d.pLate}}
	}
}
