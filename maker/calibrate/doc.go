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
// steps at random, asks each one several times through [maker.Sampler]
// (the run's own call options, red flags, parsing and requests), and counts, per
// model: right and wrong valid answers, red flags by reason, provider
// errors, tokens.
//
// # The statistics
//
// p is the share of valid samples that are right. The samples of one
// step share that step's difficulty, so each sampled step is a cluster of
// a beta-binomial fitted by maximum likelihood ([Spread]: the mean p and
// the intra-step correlation), and the interval on the mean p is the
// fit's profile-likelihood interval (its coverage is tested over 200
// seeds with and without a spread; it is not exact). k_min is the
// smallest k whose whole-run success, averaged over the Beta distribution
// of per-step p, reaches the target at every point of the joint
// likelihood-ratio confidence region of (mean p, spread): a spread the
// samples cannot detect is not taken as none, since its tail of hard
// steps can sink a long run. Where the region holds both a k and none
// (or ks far apart) the plan is undecided ([Estimate.Undecided]) with a
// forecast of the steps that would settle it ([Estimate.MoreSteps]), and
// [Config.UntilDecided] samples them; where no k reaches the target
// anywhere in it, the report says so ([Estimate.Unreachable]). When the
// first round samples every step of the task, each step's p is bounded
// on its own instead ([Estimate.EveryStep]). The hard-step floor is the
// share of sampled steps whose majority answer was wrong. Expected
// samples and cost are at the point estimate (and at the bound).
//
// The scaling laws assume one rival answer. When errors spread over many
// wrong answers, a race ends right more often than the laws say, but not
// always sooner: at small k the leader must be k ahead of every rival, so
// a race can take longer (6% more samples at k = 2, p = 0.7, 2 rivals;
// 16% at p = 0.6: TestOneRivalIsNotTheWorstCaseForCost);
// when they repeat (one favourite wrong answer), the laws are exact.
// [Repeat] measures which: how often two wrong answers to one step are the
// same answer.
//
// # Adaptive k
//
// The same estimate can be kept up during a run from the votes themselves:
// see [github.com/mdap-go/mdap/maker/adaptive.Policy], which sets each step's k from a lower bound on p
// within a failure budget.
// [CompareHanoi] runs fixed and adaptive k side by side on the simulated
// model, the rows the benchmarks report.
package calibrate
