package main

import (
	"slices"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// guardFlags are the flags of the rules that guard what a vote lets
// through: the write rule for side-effect calls, the red-flag-rate alarm,
// the self-correction red flag and the tool-first vote (maker.Config's
// Writes, FlagAlarm, Flags.SelfCorrection and ToolFirst).
type guardFlags struct {
	on             bool     // registered: the command's solver reads them
	writeK         []string // --write-k [CATEGORY=]K
	writeAnyMargin bool
	flagAlarm      string // on, off
	alarmLevel     float64
	alarmHistory   int

	writes maker.WriteRule // parsed by validate
}

// guardCommands are the commands whose steps are decided by the flags'
// own solver, so the guards apply: maker solve sets its tasks' settings
// through its jobs (batch.Builtin), and calibrate decides no step.
var guardCommands = []string{"hanoi", "run"}

// register adds the flags, the self-correction red flag and the
// tool-first vote set straight in cfg.
func (g *guardFlags) register(cmd *cobra.Command, cfg *maker.Config) {
	if !slices.Contains(guardCommands, cmd.Name()) {
		return
	}
	g.on = true
	fs := cmd.Flags()
	fs.StringArrayVar(&g.writeK, "write-k", nil, "write rule: a side-effect tool call (a category not read-only) runs only when no valid vote among the first k disagreed; otherwise the step is decided again at this margin (default twice --k). K alone for every category; CATEGORY=K for one ("+runsetup.SideEffectCategories()+"); give it several times")
	fs.BoolVar(&g.writeAnyMargin, "write-any-margin", false, "turn the write rule off: a side-effect call runs on a first-to-ahead-by-k win like any answer")
	fs.StringVar(&g.flagAlarm, "flag-alarm", "on", "red-flag-rate alarm: on (a decided step whose red flags are far too many for the run's rate so far is not taken: the run stops, or the --escalate policy decides it again) or off")
	fs.Float64Var(&g.alarmLevel, "flag-alarm-level", maker.DefaultFlagAlarmLevel, "with --flag-alarm on: the chance, at the run's rate, of at least the step's red flags below which the step is an alarm, in (0, 1)")
	fs.IntVar(&g.alarmHistory, "flag-alarm-history", maker.DefaultFlagAlarmHistory, "with --flag-alarm on: samples the run draws before any step is judged")
	fs.BoolVar(&cfg.Flags.SelfCorrection, "self-correction", false, "red-flag a reply that corrects itself mid-way (\"Wait,\", \"Actually,\", \"I made a mistake\", ... outside its quoted strings): it never votes. Off by default: a model that thinks aloud says such words too")
	fs.BoolVar(&cfg.ToolFirst, "tool-first", false, "vote a tool call hierarchically: first the tool (an answer without a call votes as itself), then its arguments among that tool's samples, so that split arguments do not lose the tool to a rival that repeats")
	_ = cmd.RegisterFlagCompletionFunc("flag-alarm", cobra.FixedCompletions([]string{"on", "off"}, cobra.ShellCompDirectiveNoFileComp))
}

// validate parses --write-k and refuses what the flags alone do not
// allow; the alarm's values are maker.FlagAlarm's to check
// (runFlags.validate).
func (g *guardFlags) validate(fs *pflag.FlagSet) error {
	if !g.on {
		return nil
	}
	w, err := runsetup.ParseWriteRule(g.writeK, g.writeAnyMargin)
	if err != nil {
		return fieldUsageErr(err, map[string]string{"Margins": "write-k", "AnyMargin": "write-any-margin"}, "--write-k")
	}
	g.writes = w
	switch {
	case g.flagAlarm != "on" && g.flagAlarm != "off":
		return usageErr("--flag-alarm %q: use on or off", g.flagAlarm)
	case g.flagAlarm == "off" && (fs.Changed("flag-alarm-level") || fs.Changed("flag-alarm-history")):
		return usageErr("--flag-alarm-level and --flag-alarm-history apply to --flag-alarm on only")
	}
	return positiveFlags(fs, "flag-alarm-level", "flag-alarm-history") // 0 is maker.FlagAlarm's default
}

// apply sets the guards in cfg. Defaults stay zero values, so that a run
// without these flags has the settings (and journal) it had before them.
func (g *guardFlags) apply(cfg *maker.Config) {
	if !g.on {
		return
	}
	cfg.Writes = g.writes
	cfg.FlagAlarm = maker.FlagAlarm{Off: g.flagAlarm == "off"}
	if !cfg.FlagAlarm.Off {
		if g.alarmLevel != maker.DefaultFlagAlarmLevel {
			cfg.FlagAlarm.Level = g.alarmLevel
		}
		if g.alarmHistory != maker.DefaultFlagAlarmHistory {
			cfg.FlagAlarm.History = g.alarmHistory
		}
	}
}
