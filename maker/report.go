package maker

import (
	"cmp"
	"time"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
)

// Price is what a model charges per million tokens, in US dollars (the
// unit of maker/models' built-in prices and of runsummary.Text).
type Price struct {
	InputPerMillion  float64 `json:"input_per_million"`
	OutputPerMillion float64 `json:"output_per_million"`
	// CachedInputPerMillion is the price of input tokens read from the
	// provider's prompt cache (vote.Usage.CachedInputTokens), and
	// CacheWritePerMillion that of input tokens written to it
	// (CacheWriteTokens, Anthropic's cache creation). Zero means
	// InputPerMillion: no discount, no premium.
	CachedInputPerMillion float64 `json:"cached_input_per_million,omitempty"`
	CacheWritePerMillion  float64 `json:"cache_write_per_million,omitempty"`
}

// Cost returns what u costs at p: uncached input at InputPerMillion,
// cached input at CachedInputPerMillion, cache writes at
// CacheWritePerMillion, output at OutputPerMillion.
func (p Price) Cost(u vote.Usage) float64 {
	cached, write := cmp.Or(max(p.CachedInputPerMillion, 0), p.InputPerMillion), p.writePrice()
	plain := u.InputTokens - u.CachedInputTokens - u.CacheWriteTokens
	return (float64(plain)*p.InputPerMillion + float64(u.CachedInputTokens)*cached +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*p.OutputPerMillion) / 1e6
}

// writePrice is CacheWritePerMillion, or InputPerMillion for none.
func (p Price) writePrice() float64 { return cmp.Or(max(p.CacheWritePerMillion, 0), p.InputPerMillion) }

// WorstCase is the most one request of n choices can cost at p: prompt
// input tokens uncached (or written to the cache, whichever is dearer)
// and maxTokens of output for each choice. Cost: O(1).
func (p Price) WorstCase(prompt, maxTokens, n int) float64 {
	in := max(p.InputPerMillion, p.writePrice())
	return (float64(prompt)*in + float64(n*maxTokens)*p.OutputPerMillion) / 1e6
}

// Report is what a run did. It holds aggregates only, so its size does not
// grow with the number of steps: a million-step run keeps a histogram, not
// a list.
type Report struct {
	// Steps is the number of decided steps, Resumed of them replayed from
	// the journal.
	Steps   int `json:"steps"`
	Resumed int `json:"resumed"`
	vote.Counts
	// Flags counts red-flagged samples by reason (see ErrEmpty and the
	// other flags).
	Flags map[string]int `json:"flags"`
	Usage vote.Usage     `json:"usage"`
	Cost  float64        `json:"cost"`
	// Models is each model's share: one entry for a single model, one per
	// member, in order, for an Ensemble.
	Models []ModelReport `json:"models"`
	// ToolCalls counts winning tool intents sent to the executor, Denied
	// those it refused.
	ToolCalls int `json:"tool_calls"`
	Denied    int `json:"denied"`
	// SampleHistogram counts the decided steps by the samples they
	// took (valid plus flagged plus failed): SampleHistogram[n] steps
	// took n samples.
	SampleHistogram map[int]int `json:"sample_histogram"`
	// KHistogram counts the decided steps by the margin they were decided
	// with: KHistogram[k] steps had margin k (one entry for a fixed k;
	// see AdaptiveK).
	KHistogram map[int]int `json:"k_histogram,omitempty"`
	// KAuto is the k policy's running state (KPlanner.State: for
	// maker/adaptive, its estimate and failure ledger); nil for a fixed
	// k. A report read from a journal's checkpoint holds it as
	// json.RawMessage until the run's policy restores it.
	KAuto any `json:"k_auto,omitempty"`
	// Contested counts the decided steps whose first race ran past the
	// escalation threshold; Escalated those the policy then decided
	// (Solver.Escalation).
	Contested int `json:"contested,omitempty"`
	Escalated int `json:"escalated,omitempty"`
	// Checked counts the decided steps whose winner the task's Verifier
	// checked (package spec: its "checker"), VoteOnly those that only
	// the vote decided; they add up to Steps.
	Checked  int `json:"checked"`
	VoteOnly int `json:"vote_only"`
	// Done reports that the task said it was finished.
	Done bool `json:"done"`
	// Wall is the time this Solve call took, replay included: for a
	// resumed run, only this process's share.
	Wall time.Duration `json:"wall_ns"`
	// StepTime is the time the decided steps took, summed over every
	// process of the run (replayed steps count with the time their
	// journal records): a resumed run's total beside Wall. Time spent on
	// a step that a crash interrupted is not in it.
	StepTime time.Duration `json:"step_time_ns"`
}

// ModelReport is one model's share of a run: its steps' shares summed
// (its samples: launched, and of those committed to a race, valid,
// flagged and failed, Cancelled were not; its valid votes for its steps'
// winners; its usage), and what they cost.
type ModelReport struct {
	// Model is the model's identity (see ModelIdentity).
	Model string `json:"model"`
	journal.ModelStep
	Cost float64 `json:"cost"`
}

// addModels adds a step's per-model shares (a single model's is the
// step's own).
func (r *Report) addModels(rec *journal.StepRecord, decided bool) {
	shares := rec.Models
	if len(shares) == 0 {
		shares = []journal.ModelStep{{Counts: rec.Counts, Usage: rec.Usage}}
		if decided {
			shares[0].WinnerVotes = rec.Votes[rec.Key]
		}
	}
	for i, ms := range shares[:min(len(shares), len(r.Models))] {
		m := &r.Models[i]
		m.Counts.Add(ms.Counts)
		m.Usage.Add(ms.Usage)
		m.WinnerVotes += ms.WinnerVotes
	}
}

// addStep adds a decided step to the report.
func (r *Report) addStep(rec *journal.StepRecord) {
	r.Steps++
	r.addSamples(rec, true)
	r.StepTime += rec.Elapsed
	if r.SampleHistogram == nil {
		r.SampleHistogram = map[int]int{}
	}
	r.SampleHistogram[rec.Valid+rec.Flagged+rec.Errors]++
	if r.KHistogram == nil {
		r.KHistogram = map[int]int{}
	}
	r.KHistogram[rec.K]++
	if rec.Contested {
		r.Contested++
	}
	if rec.Escalated {
		r.Escalated++
	}
	if rec.Checked {
		r.Checked++
	} else {
		r.VoteOnly++
	}
	if rec.Observation != nil {
		r.ToolCalls++
		if rec.Observation.Denied() {
			r.Denied++
		}
	}
}

// addSamples adds what a step's samples cost, decided or not: a failed
// race spent them too.
func (r *Report) addSamples(rec *journal.StepRecord, decided bool) {
	r.addModels(rec, decided)
	r.Counts.Add(rec.Counts)
	r.Usage.Add(rec.Usage)
	if r.Flags == nil {
		r.Flags = map[string]int{}
	}
	for k, v := range rec.Flags {
		r.Flags[k] += v
	}
}

// SamplesPerStep is the mean number of samples launched per decided step.
func (r Report) SamplesPerStep() float64 {
	if r.Steps == 0 {
		return 0
	}
	return float64(r.Launched) / float64(r.Steps)
}
