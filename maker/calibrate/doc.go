// Package calibrate estimates, before a run, what the MAKER method needs to
// know of a model on a task: its per-step success rate p, how often its
// replies are red-flagged, and whether its errors repeat; and from them the
// margin k_min that makes the whole run succeed with a target probability,
// and the samples and dollars that margin will cost. It is the first step
// of the paper's workflow: estimate p on a sample of steps, choose k from
// the scaling laws, then run.
//
// # How
//
// A microagent is stateless, so any step can be asked on its own: [Steps]
// builds step i in its true state with its correct answer ([Hanoi] from the
// solution's closed form, [Spec] from a spec task's script). [Run] samples
// steps at random, asks each one several times through [maker.Solver.Draw]
// (the run's own call options, red flags and parsing), and counts, per
// model: right and wrong valid answers, red flags by reason, provider
// errors, tokens.
//
// # The statistics
//
// p is the share of valid samples that are right. Its interval is
// Clopper-Pearson's (exact, conservative), over effective counts: the
// samples of one step share that step's difficulty, so the variance is
// estimated cluster-robustly with the step as the cluster and the interval
// widened by the design effect (at least 1). k_min is planned with the
// interval's lower bound, the expected samples and cost at the point
// estimate (and at the bound, as a pessimistic figure).
//
// The scaling laws assume one rival answer. When errors spread over many
// wrong answers, races end sooner and right more often than the laws say;
// when they repeat (one favourite wrong answer), the laws are exact.
// [Repeat] measures which: how often two wrong answers to one step are the
// same answer.
//
// # Adaptive k
//
// The same estimate can be kept up during a run from the votes themselves:
// see [maker.AdaptiveK], which sets each step's k from a lower bound on p.
// [CompareHanoi] runs fixed and adaptive k side by side on the simulated
// model, the rows the benchmarks report.
package calibrate
