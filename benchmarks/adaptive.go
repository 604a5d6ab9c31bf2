package benchmarks

import "github.com/mdap-go/mdap/maker/adaptive"

// AdaptiveFromK turns a pure per-step margin function, such as
// adaptive.Policy's K method, into Options.Adaptive. newK gets the task's
// steps and the target and returns the function.
func AdaptiveFromK(newK func(steps int, target float64) (func(step, winnerVotes, valid int) int, error)) func(steps int, target float64) (MarginPolicy, error) {
	return func(steps int, target float64) (MarginPolicy, error) {
		k, err := newK(steps, target)
		if err != nil {
			return nil, err
		}
		return MarginPolicy(k), nil
	}
}

// DefaultAdaptive is adaptive.Policy with its defaults (floor 2, max 30,
// 95% confidence, its failure budget) planning for steps steps at target:
// the adaptive row of the strategies suite. The policy it returns keeps
// the run's adaptive.KState: each call observes the step before it from the
// growth of the cumulative counts (agreement with the winner, as a
// run without a Checker does), so one policy serves one run.
var DefaultAdaptive = AdaptiveFromK(func(steps int, target float64) (func(step, winnerVotes, valid int) int, error) {
	a, err := adaptive.Policy{Target: target, Steps: steps}.WithDefaults()
	if err != nil {
		return nil, err
	}
	var st adaptive.KState
	st.Source = adaptive.SourceAgreement
	lastStep, lastK, lastW, lastV := -1, 0, 0, 0
	return func(step, winnerVotes, valid int) int {
		if lastStep >= 0 {
			a.Observe(&st, lastStep, lastK, winnerVotes-lastW, valid-lastV)
		}
		k, _, _ := a.Next(step, st)
		lastStep, lastK, lastW, lastV = step, k, winnerVotes, valid
		return k
	}, nil
})
