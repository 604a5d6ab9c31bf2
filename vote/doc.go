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
// Samples with equal keys vote together; [RaceChoosing] goes beyond keys
// with a [Choose] (a pairwise [Match] through [FirstMatch]), and
// [Classify] applies its rule outside a race.
//
// [Race]'s documentation states the launch rule (waves and speculation),
// what is deterministic (the winner, its votes and the counts are a pure
// function of the mapping from index to sample, whatever the schedule),
// the errors and the cost. [Config.WithDefaults] fills in and checks a
// Config.
//
// # Counting
//
// [Tally] embeds [Counts] (launched, valid, flagged, errors, cancelled) and
// carries a [Usage] (tokens in and out, latency): the project's one
// definition of each, with JSON tags, for reports and journals to reuse.
package vote
