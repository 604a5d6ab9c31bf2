package models

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/maker"
)

// builtinPrices are list prices in US dollars per million input and output
// tokens (standard tier, no batch discount), as published by OpenAI
// (openai.com/api/pricing) and Anthropic (anthropic.com/pricing), checked
// 2025-11-20, with the published prompt caching prices: OpenAI's cached
// input (90% off for gpt-5 models, 75% for gpt-4.1, o3 and o4-mini, 50%
// for gpt-4o and o3-mini; gpt-3.5-turbo has none) and Anthropic's cache
// reads (0.1 times input) and 5-minute cache writes (1.25 times input).
// Prices change: a spec's own price (=IN/OUT[/CACHED]) or
// --price-in/--price-out override them.
var builtinPrices = map[string]map[string]maker.Price{
	"openai": {
		"gpt-5":         {InputPerMillion: 1.25, OutputPerMillion: 10, CachedInputPerMillion: 0.125},
		"gpt-5-mini":    {InputPerMillion: 0.25, OutputPerMillion: 2, CachedInputPerMillion: 0.025},
		"gpt-5-nano":    {InputPerMillion: 0.05, OutputPerMillion: 0.40, CachedInputPerMillion: 0.005},
		"gpt-4.1":       {InputPerMillion: 2, OutputPerMillion: 8, CachedInputPerMillion: 0.5},
		"gpt-4.1-mini":  {InputPerMillion: 0.40, OutputPerMillion: 1.60, CachedInputPerMillion: 0.1},
		"gpt-4.1-nano":  {InputPerMillion: 0.10, OutputPerMillion: 0.40, CachedInputPerMillion: 0.025},
		"gpt-4o":        {InputPerMillion: 2.50, OutputPerMillion: 10, CachedInputPerMillion: 1.25},
		"gpt-4o-mini":   {InputPerMillion: 0.15, OutputPerMillion: 0.60, CachedInputPerMillion: 0.075},
		"o3":            {InputPerMillion: 2, OutputPerMillion: 8, CachedInputPerMillion: 0.5},
		"o3-mini":       {InputPerMillion: 1.10, OutputPerMillion: 4.40, CachedInputPerMillion: 0.55},
		"o4-mini":       {InputPerMillion: 1.10, OutputPerMillion: 4.40, CachedInputPerMillion: 0.275},
		"gpt-3.5-turbo": {InputPerMillion: 0.50, OutputPerMillion: 1.50},
	},
	"anthropic": {
		"claude-opus-4-5":   {InputPerMillion: 5, OutputPerMillion: 25, CachedInputPerMillion: 0.5, CacheWritePerMillion: 6.25},
		"claude-opus-4-1":   {InputPerMillion: 15, OutputPerMillion: 75, CachedInputPerMillion: 1.5, CacheWritePerMillion: 18.75},
		"claude-opus-4":     {InputPerMillion: 15, OutputPerMillion: 75, CachedInputPerMillion: 1.5, CacheWritePerMillion: 18.75},
		"claude-sonnet-4-5": {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75},
		"claude-sonnet-4":   {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75},
		"claude-3-7-sonnet": {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75},
		"claude-3-5-sonnet": {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75},
		"claude-haiku-4-5":  {InputPerMillion: 1, OutputPerMillion: 5, CachedInputPerMillion: 0.1, CacheWritePerMillion: 1.25},
		"claude-3-5-haiku":  {InputPerMillion: 0.80, OutputPerMillion: 4, CachedInputPerMillion: 0.08, CacheWritePerMillion: 1.0},
		"claude-3-haiku":    {InputPerMillion: 0.25, OutputPerMillion: 1.25, CachedInputPerMillion: 0.025, CacheWritePerMillion: 0.3125},
	},
}

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
	table := builtinPrices[provider]
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
	for provider, table := range builtinPrices {
		for name := range maps.Keys(table) {
			out = append(out, provider+":"+name)
		}
	}
	slices.Sort(out)
	return out
}
