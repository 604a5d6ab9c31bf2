package main

import (
	"github.com/spf13/pflag"
)

// validateK refuses --target, --k-floor and --k-max without --k auto
// (but --target where the command reads it); their values are
// adaptive.Policy's to check (runFlags.validate).
func (f *runFlags) validateK(fs *pflag.FlagSet) error {
	if f.Settings.Margin.Auto {
		return nil
	}
	if name := given(fs, "k-floor", "k-max"); name != "" {
		return usageErr("--%s applies to --k auto only", name)
	}
	if fs.Changed("target") && !f.usesTarget {
		return usageErr("--target applies to --k auto only (with a fixed --k, see maker calibrate or maker kmin for the k a target needs)")
	}
	return nil
}
