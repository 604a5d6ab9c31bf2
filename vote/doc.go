// Package vote decides: first-to-ahead-by-k voting over any sample type,
// with parallel waves, speculation, cancellation and budgets ([Race]). The
// scaling laws that say how large k must be and what it costs are package
// vote/laws (with the rival structure as an input, vote/rivals).
//
// # The race
//
// A [Drawer] draws sample i of a step; each [Sample] either votes for its
// Key (never 0), is red-flagged (never votes, counts toward the sample
// budget) or is a failed draw (never votes, counts toward the error budget,
// backs off). [Race] returns the first key that leads every other key by K
// valid votes, and nothing else: when the budget is spent it fails with
// [ErrUndecided] and its tally, never with a silent leader.
//
//	res, err := vote.Race(ctx, vote.Config{K: 3}, draw)
//	if errors.Is(err, vote.ErrUndecided) { ... } // err is an *UndecidedError
//
// Samples with equal keys vote together. [RaceMatching] goes beyond keys
// with a [Match]: each valid sample, in index order, joins the first class
// whose first member it matches, so classes stay a function of the sample
// order ([Classify] applies the same rule outside a race).
//
// The race keeps in flight the leader's need, K minus its lead, plus
// [Config].Speculate, capped by Parallel: the first wave is K + Speculate
// draws, so if all agree the step is decided in one round trip. With
// Speculate = 0 (the default) no draw is started that could only matter if
// one already in flight went against the leader; a positive Speculate buys
// fewer round trips with draws that may be cancelled unused. When a key
// leads by K, the draws in flight are cancelled through their context and
// Race returns once every draw it started has returned. After a failed
// draw the next launch waits a backoff that doubles with each failure in a
// row; [NoBackoff] turns it off. [Config.WithDefaults] fills in and checks
// a Config, and is idempotent.
//
// # Determinism
//
// Samples are tallied in index order, not completion order: a sample that
// completes early waits until every lower index is tallied. The race ends at
// the first index whose prefix holds a lead of K (or spends a budget), so the
// winner, its votes and the counts of valid, flagged and failed samples are a
// pure function of the mapping from index to sample, whatever the goroutine
// schedule, Parallel and Speculate. With a drawer that derives sample i from
// a seed, the step and i (as the simulated model does), a run is
// reproducible at any parallelism, and Parallel = 1 is exactly the paper's
// sequential rule. Only Rounds, Wall, measured latencies and, with
// Speculate > 0 or when a race ends on ErrTooManyErrors or its context,
// Launched and Cancelled depend on timing.
//
// # Counting
//
// [Tally] embeds [Counts] (launched, valid, flagged, errors, cancelled) and
// carries a [Usage] (tokens in and out, latency): the project's one
// definition of each, with JSON tags, for reports and journals to reuse.
//
// # Cost
//
// Race runs each draw on a goroutine of its own, ended before Race
// returns, and adds a few small allocations per sample (BenchmarkRace).
// Memory is O(distinct keys + samples in flight).
package vote
