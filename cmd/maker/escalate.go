package main

import (
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/pflag"
)

// escalateFlags are --escalate and its options (maker.Escalation).
type escalateFlags struct {
	policy string
	after  int
	k      int
	model  string
}

func (e *escalateFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&e.policy, "escalate", "", "what a contested step gets (one still undecided after --escalate-after samples): raise-k (a new race at --escalate-k), model (a new race drawn from --escalate-model) or stop (the run stops, the step marked for review, exit 1)")
	fs.IntVar(&e.after, "escalate-after", 0, "with --escalate: samples after which an undecided step is contested (default 4 times its k)")
	fs.IntVar(&e.k, "escalate-k", 0, "with --escalate raise-k: the margin of the second race (default twice the step's k)")
	fs.StringVar(&e.model, "escalate-model", "", "with --escalate model: the --model spec of the model that decides contested steps, a model the run does not use (refused if it is one of the run's --model: asking the model whose votes split again makes a hard step's wrong answer win more surely); sim: the simulated model with the same flags and seed+1, so its hard steps are other steps")
}

// validate refuses an option without its policy; their values are
// maker.Escalation's to check (runFlags.validate).
func (e *escalateFlags) validate(fs *pflag.FlagSet) error {
	if name := given(fs, "escalate-after", "escalate-k", "escalate-model"); e.policy == "" && name != "" {
		return usageErr("--%s applies to --escalate only", name)
	}
	switch {
	case fs.Changed("escalate-k") && e.policy != maker.EscalateRaiseK:
		return usageErr("--escalate-k applies to --escalate raise-k only")
	case e.policy != "" && (e.model != "") != (e.policy == maker.EscalateModel):
		return usageErr("--escalate model and --escalate-model SPEC go together")
	}
	return nil
}

// config is the policy without its model, nil without --escalate.
func (e *escalateFlags) config() *maker.Escalation {
	if e.policy == "" {
		return nil
	}
	return &maker.Escalation{Policy: e.policy, After: e.after, K: e.k}
}

// escalation builds the policy, nil without --escalate. The model of
// --escalate model is opened as --model would open it (the simulated
// model with seed+1, so its hard steps are others).
func (f *runFlags) escalation(oracle sim.Oracle) (*maker.Escalation, error) {
	out := f.esc.config()
	if f.esc.model == "" {
		return out, nil
	}
	g := *f
	g.models, g.sim.Seed = []string{f.esc.model}, f.sim.Seed+1
	m, err := g.openModels(oracle)
	if err != nil {
		return nil, usageErr("--escalate-model: %w", err)
	}
	out.Model = m
	return out, nil
}
