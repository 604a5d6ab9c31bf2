package main

import (
	"github.com/mdap-go/mdap/benchmarks"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// enumValues are the values of every flag that takes one of a fixed set,
// by flag name: what shell completion offers (maker completion SHELL).
// A flag of that name on any command gets them, unless it has its own.
var enumValues = map[string][]string{
	"log-format":       {observe.LogText, observe.LogJSON},
	"log-level":        {"debug", "info", "warn", "error"},
	"escalate":         {maker.EscalateRaiseK, maker.EscalateModel, maker.EscalateStop},
	"tool-declaration": {"auto", "native", "prompt", "both"},
	"samples-per-call": {"1", "auto"},
	"k":                {"auto"},
	"task":             {"hanoi", "spec"},
	"auth":             {"roles", "token"},
	"suite":            benchmarks.Suites,
}

// registerEnumCompletions gives every enum flag of cmd and its
// subcommands its values as completions, and no file names.
func registerEnumCompletions(cmd *cobra.Command) {
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		vals, ok := enumValues[f.Name]
		if !ok {
			return
		}
		if _, has := cmd.GetFlagCompletionFunc(f.Name); has {
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp))
	})
	for _, c := range cmd.Commands() {
		registerEnumCompletions(c)
	}
}
