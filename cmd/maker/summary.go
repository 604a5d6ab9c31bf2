package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/cluster"
)

// runTotals is what every run command's --json summary says of the run;
// each command adds its task's own fields around it.
type runTotals struct {
	Steps          int            `json:"steps"`
	Samples        int            `json:"samples"`
	Valid          int            `json:"valid"`
	Flagged        int            `json:"flagged"`
	Errors         int            `json:"errors"`
	Cancelled      int            `json:"cancelled"`
	Flags          map[string]int `json:"flags"`
	SamplesPerStep float64        `json:"samples_per_step"`
	InputTokens    int            `json:"input_tokens"`
	OutputTokens   int            `json:"output_tokens"`
	// CachedInputTokens and CacheWriteTokens are the input tokens read
	// from and written to the provider's prompt cache; Requests the
	// provider requests (fewer than Samples with --samples-per-call).
	CachedInputTokens int            `json:"cached_input_tokens"`
	CacheWriteTokens  int            `json:"cache_write_tokens"`
	Requests          int            `json:"requests"`
	Cost              float64        `json:"cost"` // dollars
	Resumed           int            `json:"resumed"`
	WallSeconds       float64        `json:"wall_seconds"`
	K                 int            `json:"k"`
	Model             string         `json:"model"`
	Models            []modelSummary `json:"models"`
	Seed              uint64         `json:"seed,omitempty"`
	Error             string         `json:"error,omitempty"`

	// --k auto: the steps by their k, and the run's own estimate of p.
	KHistogram map[int]int         `json:"k_histogram"`
	PEstimate  *adaptive.PEstimate `json:"p_estimate,omitempty"`
	// --escalate: the contested steps and those the policy decided.
	Contested int `json:"contested"`
	Escalated int `json:"escalated"`
	// The steps a task's check verified (a spec's "checker") and those
	// only the vote decided.
	Checked  int `json:"checked"`
	VoteOnly int `json:"vote_only"`
	// --nats: the distinct worker identities a step's winning votes came
	// from at least (--min-workers as settled), and the workers
	// quarantined for answers that lost far more often than their peers'.
	MinWorkers  int                   `json:"min_workers,omitempty"`
	Quarantined []cluster.Quarantined `json:"quarantined,omitempty"`
}

// totals summarises a run of s that ended with rep and runErr.
func (f *runFlags) totals(ctx context.Context, s *maker.Solver, rep maker.Report, runErr error) runTotals {
	t := runTotals{
		Steps: rep.Steps, Samples: rep.Launched, Valid: rep.Valid, Flagged: rep.Flagged,
		Errors: rep.Errors, Cancelled: rep.Cancelled, Flags: maps.Clone(rep.Flags),
		CachedInputTokens: rep.Usage.CachedInputTokens, CacheWriteTokens: rep.Usage.CacheWriteTokens, Requests: rep.Usage.Requests,
		SamplesPerStep: rep.SamplesPerStep(), InputTokens: rep.Usage.InputTokens,
		OutputTokens: rep.Usage.OutputTokens, Cost: rep.Cost, Resumed: rep.Resumed,
		WallSeconds: rep.Wall.Seconds(), K: f.k, Model: f.modelName(), Models: modelSummaries(s, rep),
		KHistogram: maps.Clone(rep.KHistogram), PEstimate: f.pEstimate(s, rep),
		Contested: rep.Contested, Escalated: rep.Escalated, Checked: rep.Checked, VoteOnly: rep.VoteOnly,
	}
	if t.Flags == nil {
		t.Flags = map[string]int{}
	}
	if f.drawer != nil {
		t.MinWorkers, t.Quarantined = max(f.minVoters, 1), f.drawer.Quarantined()
	}
	if slices.Contains(f.models, "sim") {
		t.Seed = f.seed
	}
	if runErr != nil {
		t.Error = runErr.Error()
		if ctx.Err() != nil {
			t.Error = "interrupted"
		}
	}
	return t
}

// report writes a run's summary: sum as JSON, or headline, the report's
// text and the --k auto estimate. A failed write fails the command (see
// run).
func report(out io.Writer, asJSON bool, sum any, headline string, rep maker.Report, t runTotals) {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
		return
	}
	fmt.Fprint(out, headline)
	fmt.Fprint(out, rep.String())
	if t.PEstimate != nil {
		fmt.Fprintf(out, "k auto: %s\n", t.PEstimate)
	}
}

// ending is a run command's error once its summary is written.
func (f *runFlags) ending(ctx context.Context, err error, solved bool, why string) error {
	switch {
	case err != nil && ctx.Err() != nil:
		return interrupted(f.journal)
	case err != nil:
		return runErr(err)
	case !solved:
		return failed(fmt.Errorf("not solved: %s", why))
	}
	return nil
}
