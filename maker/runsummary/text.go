package runsummary

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
)

// Text renders rep for a terminal, as the run commands print it: the
// steps and wall time, the samples by outcome, the red flags by reason,
// the tokens and cost, each member's share for an ensemble, and the tool
// calls, checked, contested and escalated steps and steps by k when there
// are any. Cost: linear in the flags, the models and the k histogram.
func Text(r maker.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "steps %d (resumed %d), done %v, wall %s", r.Steps, r.Resumed, r.Done, r.Wall.Round(time.Millisecond))
	if r.Resumed > 0 {
		fmt.Fprintf(&b, " (all processes: %s of steps)", r.StepTime.Round(time.Millisecond))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "samples %d: valid %d, flagged %d, errors %d, cancelled %d; %.3f per step\n",
		r.Launched, r.Valid, r.Flagged, r.Errors, r.Cancelled, r.SamplesPerStep())
	if len(r.Flags) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.Flags)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.Flags[k]))
		}
		fmt.Fprintf(&b, "flags: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "tokens in %d, out %d%s; cost $%.4f\n", r.Usage.InputTokens, r.Usage.OutputTokens, cacheText(r.Usage), r.Cost)
	if len(r.Models) > 1 {
		for _, m := range r.Models {
			fmt.Fprintf(&b, "  %s: samples %d, valid %d, flagged %d, errors %d, winner votes %d, tokens in %d, out %d, cost $%.4f\n",
				m.Model, m.Launched, m.Valid, m.Flagged, m.Errors, m.WinnerVotes, m.Usage.InputTokens, m.Usage.OutputTokens, m.Cost)
		}
	}
	if r.ToolCalls > 0 {
		fmt.Fprintf(&b, "tool calls %d, denied %d\n", r.ToolCalls, r.Denied)
	}
	if r.Checked > 0 {
		fmt.Fprintf(&b, "checked steps %d, vote-only %d\n", r.Checked, r.VoteOnly)
	}
	if r.Contested > 0 || r.Escalated > 0 {
		fmt.Fprintf(&b, "contested steps %d, escalated %d\n", r.Contested, r.Escalated)
	}
	if len(r.KHistogram) > 1 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.KHistogram)) {
			parts = append(parts, fmt.Sprintf("k=%d %d", k, r.KHistogram[k]))
		}
		fmt.Fprintf(&b, "steps by k: %s\n", strings.Join(parts, ", "))
	}
	return b.String()
}

// cacheText is the report's note on cached input and requests, if any.
func cacheText(u vote.Usage) string {
	var parts []string
	if u.CachedInputTokens > 0 {
		parts = append(parts, fmt.Sprintf("cached in %d", u.CachedInputTokens))
	}
	if u.CacheWriteTokens > 0 {
		parts = append(parts, fmt.Sprintf("cache writes %d", u.CacheWriteTokens))
	}
	if u.Requests > 0 {
		parts = append(parts, fmt.Sprintf("requests %d", u.Requests))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
