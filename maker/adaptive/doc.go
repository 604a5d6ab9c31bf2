// Package adaptive is adaptive k: each step's voting margin chosen from
// the run's own votes within a failure budget, in place of a fixed k
// (`--k auto`). Set a Policy as maker.Config.AdaptiveK; the step loop
// asks its plan (maker.KPlanner) for each step's k and tells it each
// decided step, live or replayed from a journal.
//
// A Policy plans with a beta-binomial fit of the steps' difficulty
// (SpreadFit), a change-point test for drift (DriftTest) and a ledger of
// the failure charged step by step (FailureBudget); its running state
// (KState) rides in maker.Report.KAuto, so a journal's checkpoint saves it
// and a resumed run makes the choices of the uninterrupted one. Estimate
// reports what the votes say of p. See Policy for the rule and the
// guarantee, and docs/calibrate.md for the runs behind the defaults.
//
// The step loop does not import this package: it holds the small
// maker.KPolicy interface, which Policy implements.
package adaptive
