package sim

import (
	"fmt"
	"strings"
)

// PChange is a change of the simulated model's P during a run: from step
// Step (counted from 0, by the sample's identity) on, valid replies are
// right with probability P. See Config.Drift.
type PChange struct {
	Step int     `json:"step"`
	P    float64 `json:"p"`
}

// PAt returns the probability that a valid reply at step is right before
// any difficulty spread: the P of the last Drift change at or before
// step, else Config.P. A call without a sample identity counts as step
// 0. Cost: O(len(Drift)).
func (c Config) PAt(step int) float64 {
	p := c.P
	for _, d := range c.Drift {
		if d.Step > step {
			break
		}
		p = d.P
	}
	return p
}

// validateDrift checks Drift: steps increasing from 1, each P in (0, 1].
func (c Config) validateDrift() error {
	last := 0
	for i, d := range c.Drift {
		switch {
		case d.Step <= last:
			return fieldErr(fmt.Sprintf("Drift[%d].Step", i), d.Step, fmt.Sprintf("use a step of %d or more (changes go in increasing order from step 1)", last+1))
		case !(d.P > 0 && d.P <= 1):
			return fieldErr(fmt.Sprintf("Drift[%d].P", i), d.P, probabilityAbove0)
		}
		last = d.Step
	}
	return nil
}

// driftText is Drift for Model.Identity: " drift=920:0.8,1000:0.7", or
// empty without changes.
func (c Config) driftText() string {
	if len(c.Drift) == 0 {
		return ""
	}
	parts := make([]string, len(c.Drift))
	for i, d := range c.Drift {
		parts[i] = fmt.Sprintf("%d:%g", d.Step, d.P)
	}
	return " drift=" + strings.Join(parts, ",")
}
