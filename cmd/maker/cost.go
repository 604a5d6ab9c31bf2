package main

import (
	"math"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/spf13/pflag"
)

// costFlags are the flags that decide what a run pays: several samples
// per request and the spending cap (docs/cost.md).
type costFlags struct {
	samplesPerCall string
	perCall        int // parsed --samples-per-call
	maxCost        float64
	modelsFile     string // --models FILE (modelsfile.go)
	modelsLoaded   bool
}

func (c *costFlags) registerCost(fs *pflag.FlagSet) {
	fs.StringVar(&c.samplesPerCall, "samples-per-call", "1", "samples per provider request: 1 (one request per sample, the paper's way), N (up to N choices a request, llms n), or auto (a wave's samples of one temperature in one request; a provider that ignores n is detected and served one by one)")
	fs.StringVar(&c.modelsFile, "models", "", "models FILE (\"-\": standard input): one --model spec a line (# comments), or a JSON array of specs; each may carry its own ;base=URL;key=ENV;rpm=N;inflight=N. Added after the --model flags given (it replaces the default sim)")
	fs.Float64Var(&c.maxCost, "max-cost", 0, "spending cap in US dollars for the whole run (solve: every task, over every run of the batch): a call whose worst case (prompt plus --max-tokens per choice) would pass it is not started, and the run stops undecided (exit 1); resume with a larger cap (0: no cap)")
}

// validateCost parses the flags; errors are usage errors.
func (c *costFlags) validateCost() error {
	switch v := strings.TrimSpace(c.samplesPerCall); v {
	case "auto":
		c.perCall = maker.SamplesPerCallAuto
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maker.MaxSamplesPerCall {
			return usageErr("--samples-per-call %q: use auto, or a number from 1 to %d", c.samplesPerCall, maker.MaxSamplesPerCall)
		}
		c.perCall = n
	}
	if !(c.maxCost >= 0) || math.IsInf(c.maxCost, 0) {
		return usageErr("--max-cost %v: use a number of US dollars, or 0 for no cap", c.maxCost)
	}
	return nil
}

// budget is the run's spending cap, nil without --max-cost.
func (c *costFlags) budget() *budget.Budget {
	if c.maxCost <= 0 {
		return nil
	}
	return budget.New(c.maxCost)
}

// billingFlagOf names the flag of each simserver.Billing field.
var billingFlagOf = flagbind.Names(nil, simserver.Billing{})

// checkBilling checks serve-sim's billing flags by simserver.Billing's own
// rules, refusing 0 for a cache setting (the library's default, which
// leaving the flag out gives); errors are usage errors.
func checkBilling(fs *pflag.FlagSet, b simserver.Billing) error {
	if err := positiveFlags(fs, "cache-min-tokens", "cache-block-tokens", "cache-entries", "cache-ttl"); err != nil {
		return err
	}
	return fieldUsageErr(b.Validate(), billingFlagOf, "billing")
}
