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
}

func (d *driftFlags) register(fs *pflag.FlagSet) {
	fs.Float64Var(&d.pLate, "p-late", 0, "simulated model: from step --p-change-at on, the probability that a valid reply is right (a model that drifts late in the run)")
	fs.IntVar(&d.changeAt, "p-change-at", 0, "simulated model: the step (from 0) where --p becomes --p-late")
}

// validate checks that --p-late and --p-change-at come together and in
// range.
func (d *driftFlags) validate(fs *pflag.FlagSet) error {
	late, at := fs.Changed("p-late"), fs.Changed("p-change-at")
	switch {
	case late != at:
		return usageErr("--p-late and --p-change-at go together: --p-late P --p-change-at STEP")
	case !late:
		return nil
	case !(d.pLate > 0 && d.pLate <= 1):
		return usageErr("--p-late %v: use a probability above 0, up to 1", d.pLate)
	case d.changeAt < 1:
		return usageErr("--p-change-at %d: use a step of 1 or more (at step 0, set --p instead)", d.changeAt)
	}
	return nil
}

// apply sets c's Drift.
func (d *driftFlags) apply(c *sim.Config) {
	if d.changeAt > 0 {
		c.Drift = []sim.PChange{{Step: d.changeAt, P: d.pLate}}
	}
}
