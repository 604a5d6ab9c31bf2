package main

import (
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/spf13/pflag"
)

// registerCost adds --models, which models a run asks (docs/cost.md;
// --max-cost is runsetup.Run's, which checks it).
func (c *runFlags) registerCost(fs *pflag.FlagSet) {
	fs.StringVar(&c.modelsFile, "models", "", "models FILE (\"-\": standard input): one --model spec a line (# comments), or a JSON array of specs; each may carry its own ;base=URL;key=ENV;rpm=N;inflight=N. Added after the --model flags given (it replaces the default sim)")
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
