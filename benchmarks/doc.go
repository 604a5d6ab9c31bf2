// Package benchmarks is the consensus-cost suite: the experiments that say
// what a user deciding on k, parallelism and a model needs to know, run side
// by side in one process, with a report and its charts. `maker bench` calls
// it; results/REPORT.md is the committed report of a full run.
//
// The suites (see [Suites]):
//
//   - fidelity: the vote against the gambler's-ruin theory. For p in {0.6,
//     0.75, 0.9, 0.99} and k in {1, 2, 3, 5}, with errors on one rival and
//     spread over eight, samples per step against laws.ExpectedSamples and
//     rivals.ExpectedSamples, wrong winners against laws.PStep and
//     rivals.PStep, with confidence intervals, through vote.Race alone and
//     through the whole Hanoi pipeline on the simulated model; and what
//     per-step difficulty (sim.Config.DifficultySpread, HardAgree) and an
//     ensemble of differently seeded models do to the wrong-step rate at the
//     k that laws.KMin recommends for the mean p.
//   - strategies: the same seeded steps decided by first-to-ahead-by-k
//     sequentially, in waves, with speculation, in fixed batches, by plain
//     majority, by first-to-k and by adaptive k (a hook, see
//     [Options.Adaptive]): samples and wrong steps per step, wall time per
//     step in model latencies (fixed and lognormal), cost of a million
//     steps.
//   - scale: Towers of Hanoi on the simulated model from 10 to 20 disks:
//     wall time per step, peak memory, CPU per sample split by a CPU profile
//     into model, parse, key, vote, journal and the runtime, and what the
//     journal costs.
//   - real: the same steps through maker/simserver over HTTP with
//     langchaingo's OpenAI client, and through the NATS JetStream engine
//     (maker/cluster, [OverNATS]), against the in-process model.
//   - goals: issue #36's user-felt goals in one run, each a figure with its
//     goal and its bar ([FeltGoal]): wall time per step over the model
//     latency, the NATS engine over in process, dollars per step over the
//     output the vote buys, the share of an --rpm a batch uses and its 429s,
//     a batch's throughput on 4 workers over 1, 20-disk Hanoi's CPU and
//     memory, the journal's wall cost. [Report.BarErr] names a figure past
//     its bar; maker bench then exits 1.
//
// Measurements that compare are taken side by side in one run and reported
// as ratios; statistical claims carry 95% confidence intervals.
//
// The Go benchmarks of this package (go test -bench) measure single
// pieces:
//
//	go test -run '^$' -bench . -benchmem ./benchmarks/
package benchmarks
