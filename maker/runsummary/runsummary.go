// Package runsummary is a Solver's run as the maker commands' --json
// summaries give it: a maker.Report's totals in flat, stable JSON (Totals),
// each model's share with the price it was charged at (Model), and, under
// --k auto, the run's estimate of p. A caller adds its task's own fields
// around Totals (embed it).
package runsummary

import (
	"maps"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/tmc/langchaingo/llms"
)

// Totals is what a run's summary says of any Solver's run.
type Totals struct {
	Steps          int            `json:"steps"`
	Samples        int            `json:"samples"`
	Valid          int            `json:"valid"`
	Flagged        int            `json:"flagged"`
	Errors         int            `json:"errors"`
	Cancelled      int            `json:"cancelled"`
	Flags          map[string]int `json:"flags"` // never nil: {} when no reply was flagged
	SamplesPerStep float64        `json:"samples_per_step"`
	InputTokens    int            `json:"input_tokens"`
	OutputTokens   int            `json:"output_tokens"`
	// CachedInputTokens and CacheWriteTokens are the input tokens read
	// from and written to the provider's prompt cache; Requests the
	// provider requests (fewer than Samples with several samples per call).
	CachedInputTokens int     `json:"cached_input_tokens"`
	CacheWriteTokens  int     `json:"cache_write_tokens"`
	Requests          int     `json:"requests"`
	Cost              float64 `json:"cost"` // dollars
	Resumed           int     `json:"resumed"`
	WallSeconds       float64 `json:"wall_seconds"`
	Models            []Model `json:"models"`

	// Under --k auto (an adaptive.Policy): the steps by their k, and the
	// run's own estimate of p.
	KHistogram map[int]int         `json:"k_histogram"`
	PEstimate  *adaptive.PEstimate `json:"p_estimate,omitempty"`
	// With an escalation policy: the contested steps and those the policy
	// decided.
	Contested int `json:"contested"`
	Escalated int `json:"escalated"`
	// The steps a task's check verified (a spec's "checker") and those
	// only the vote decided.
	Checked  int `json:"checked"`
	VoteOnly int `json:"vote_only"`
}

// Model is one model's share of a run.
type Model struct {
	Model        string  `json:"model"`
	Samples      int     `json:"samples"`
	Valid        int     `json:"valid"`
	Flagged      int     `json:"flagged"`
	Errors       int     `json:"errors"`
	Cancelled    int     `json:"cancelled"`
	WinnerVotes  int     `json:"winner_votes"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	PriceIn      float64 `json:"price_in"`  // dollars per million input tokens
	PriceOut     float64 `json:"price_out"` // and output tokens
	Cost         float64 `json:"cost"`      // dollars
}

// Of is the Totals of s's run that ended with rep: rep's figures, each
// model's share priced as it was charged (a maker.Priced model's own
// price, else s.Price; an ensemble's members in order), and, when s's
// k policy is an adaptive.Policy, its estimate of p. Cost: linear in the
// models and the flags.
func Of(s *maker.Solver, rep maker.Report) Totals {
	t := Totals{
		Steps: rep.Steps, Samples: rep.Launched, Valid: rep.Valid, Flagged: rep.Flagged,
		Errors: rep.Errors, Cancelled: rep.Cancelled, Flags: maps.Clone(rep.Flags),
		CachedInputTokens: rep.Usage.CachedInputTokens, CacheWriteTokens: rep.Usage.CacheWriteTokens, Requests: rep.Usage.Requests,
		SamplesPerStep: rep.SamplesPerStep(), InputTokens: rep.Usage.InputTokens,
		OutputTokens: rep.Usage.OutputTokens, Cost: rep.Cost, Resumed: rep.Resumed,
		WallSeconds: rep.Wall.Seconds(), Models: models(s, rep),
		KHistogram: maps.Clone(rep.KHistogram), Contested: rep.Contested, Escalated: rep.Escalated,
		Checked: rep.Checked, VoteOnly: rep.VoteOnly,
	}
	if t.Flags == nil {
		t.Flags = map[string]int{}
	}
	if a, ok := adaptive.Of(s.AdaptiveK); ok {
		e := a.Estimate(rep)
		t.PEstimate = &e
	}
	return t
}

// models is each model's share of rep, with its price: the ensemble's
// members in order, or the one model.
func models(s *maker.Solver, rep maker.Report) []Model {
	ms := []llms.Model{s.Model}
	if e, ok := s.Model.(*maker.Ensemble); ok {
		ms = e.Members()
	}
	out := make([]Model, 0, len(rep.Models))
	for i, m := range rep.Models {
		price := s.Price
		if i < len(ms) {
			if p, ok := ms[i].(maker.Priced); ok {
				price = p.Price()
			}
		}
		out = append(out, Model{
			Model: m.Model, Samples: m.Launched, Valid: m.Valid, Flagged: m.Flagged, Errors: m.Errors,
			Cancelled: m.Cancelled, WinnerVotes: m.WinnerVotes, InputTokens: m.Usage.InputTokens,
			OutputTokens: m.Usage.OutputTokens, PriceIn: price.InputPerMillion, PriceOut: price.OutputPerMillion, Cost: m.Cost,
		})
	}
	return out
}
