package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
	"github.com/spf13/pflag"
)

// kValue is the --k flag: a margin, or "auto" for adaptive.Policy (the
// margin is then 0).
type kValue struct {
	k    *int
	auto *bool
}

func (v *kValue) String() string {
	if v.auto != nil && *v.auto {
		return "auto"
	}
	if v.k == nil {
		return "0"
	}
	return strconv.Itoa(*v.k)
}

func (v *kValue) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		*v.k, *v.auto = 0, true
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > vote.MaxK { // 0 is vote.Config's default: no flag value
		return fmt.Errorf("want a margin from 1 to %d, or auto", vote.MaxK)
	}
	*v.k, *v.auto = n, false
	return nil
}

func (v *kValue) Type() string { return "k" }

// validateK refuses --target, --k-floor and --k-max without --k auto
// (but --target where the command reads it); their values are
// adaptive.Policy's to check (runFlags.validate).
func (f *runFlags) validateK(fs *pflag.FlagSet) error {
	if f.kAuto {
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

// kBound is the largest margin a step may have: --k, or --k-max with --k
// auto.
func (f *runFlags) kBound() int {
	if f.kAuto {
		return f.kPolicy.Max
	}
	return f.cfg.Vote.K
}

// adaptive is the --k auto policy for a task of steps steps, nil with a
// fixed --k.
func (f *runFlags) adaptive(steps int) maker.KPolicy {
	if !f.kAuto {
		return nil
	}
	p := f.kPolicy
	p.Steps = steps
	return &p
}

// kText is --k as the summaries print it: "3" or "auto".
func (f *runFlags) kText() string { return (&kValue{k: &f.cfg.Vote.K, auto: &f.kAuto}).String() }
