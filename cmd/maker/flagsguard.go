package main

import (
	"slices"
	"strings"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// guardCommands are the commands whose steps are decided by the flags'
// own solver, so the guards (runsetup.Guards) apply: maker solve sets its
// tasks' settings through its jobs (batch.Builtin), and calibrate decides
// no step.
var guardCommands = []string{"hanoi", "run"}

// guardFlagOf names the flag of each runsetup.Guards field.
var guardFlagOf = flagbind.Names(nil, runsetup.Guards{})

// registerGuards binds the guards' flags on the commands that read them.
func (f *runFlags) registerGuards(cmd *cobra.Command) {
	if !slices.Contains(guardCommands, cmd.Name()) {
		return
	}
	f.guardsOn, f.guards = true, runsetup.DefaultGuards()
	fs := cmd.Flags()
	flagbind.Bind(fs, &f.guards)
	fs.Lookup("write-k").Usage = strings.Replace(fs.Lookup("write-k").Usage, "CATEGORIES", runsetup.SideEffectCategories(), 1)
	_ = cmd.RegisterFlagCompletionFunc("flag-alarm", cobra.FixedCompletions([]string{"on", "off"}, cobra.ShellCompDirectiveNoFileComp))
}

// validateGuards sets the guards in the run's settings
// (runsetup.Guards.Apply, its errors said in flags) and refuses what the
// flags alone do not allow; the alarm's values are maker.FlagAlarm's to
// check (runFlags.validate).
func (f *runFlags) validateGuards(fs *pflag.FlagSet) error {
	if !f.guardsOn {
		return nil
	}
	if err := fieldUsageErr(f.guards.Apply(&f.cfg), guardFlagOf, "--write-k"); err != nil {
		return err
	}
	if f.guards.FlagAlarm == "off" && given(fs, "flag-alarm-level", "flag-alarm-history") != "" {
		return usageErr("--flag-alarm-level and --flag-alarm-history apply to --flag-alarm on only")
	}
	return positiveFlags(fs, "flag-alarm-level", "flag-alarm-history") // 0 is maker.FlagAlarm's default
}
