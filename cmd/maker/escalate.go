package main

import (
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
)

// escalation opens the model of --escalate model into cfg's policy
// (runsetup.Run.OpenEscalation).
func (f *runFlags) escalation(cfg *maker.Config, oracle sim.Oracle) error {
	m, err := f.OpenEscalation(oracle)
	if err != nil {
		return usageErr("--escalate-model: --model %w", err)
	} else if m != nil {
		esc := *cfg.Escalation
		esc.Model, cfg.Escalation = m, &esc
	}
	return nil
}
