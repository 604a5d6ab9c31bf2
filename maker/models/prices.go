package models

import (
	"regexp"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/maker"
)

// Each provider's prices are list prices in US dollars per million input
// and output tokens at its own API (standard tier, no batch discount),
// with its published prompt caching prices, as its file says (provider's
// prices). Prices change: a spec's own price (=IN/OUT[/CACHED]) or
// --price-in/--price-out override them.

// versionSuffix is what may follow a table name in a model's name: a
// snapshot date (-2024-07-18, -20241022) or -latest.
var versionSuffix = regexp.MustCompile(`^(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)?$`)

// BuiltinPrice returns the list price of a well-known model at its
// provider's own API ("openai" or "anthropic"), in dollars per million
// tokens: the table entry whose name is the model's name, or its name
// without a snapshot date or -latest ("gpt-4o-mini-2024-07-18" is priced
// as "gpt-4o-mini"). ok is false for any other model; a model served by
// another server (--base-url) is not looked up by Open, since its price
// is that server's. Cost: a map lookup per table entry.
func BuiltinPrice(provider, name string) (p maker.Price, ok bool) {
	pr := providerNamed(provider)
	if pr == nil {
		return maker.Price{}, false
	}
	table := pr.Prices
	best := ""
	for n := range table {
		if strings.HasPrefix(name, n) && versionSuffix.MatchString(name[len(n):]) && len(n) > len(best) {
			best = n
		}
	}
	if best == "" {
		return maker.Price{}, false
	}
	return table[best], true
}

// KnownModels lists the specs of the models BuiltinPrice knows, sorted:
// "anthropic:claude-3-5-haiku", ..., "openai:gpt-4o-mini", ...
func KnownModels() []string {
	var out []string
	for _, p := range registered() {
		for name := range p.Prices {
			out = append(out, p.Name+":"+name)
		}
	}
	slices.Sort(out)
	return out
}
