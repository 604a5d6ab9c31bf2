package main

import (
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/pflag"
)

// validateEscalation refuses an --escalate option without its policy;
// their values are maker.Escalation's to check (runFlags.validate).
func (f *runFlags) validateEscalation(fs *pflag.FlagSet) error {
	e := f.Settings.Escalation
	if name := given(fs, "escalate-after", "escalate-k", "escalate-model"); e.Policy == "" && name != "" {
		return usageErr("--%s applies to --escalate only", name)
	}
	switch {
	case fs.Changed("escalate-k") && e.Policy != maker.EscalateRaiseK:
		return usageErr("--escalate-k applies to --escalate raise-k only")
	case e.Policy != "" && (e.Model != "") != (e.Policy == maker.EscalateModel):
		return usageErr("--escalate model and --escalate-model SPEC go together")
	}
	return nil
}

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
