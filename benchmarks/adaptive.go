package benchmarks

import "github.com/mdap-go/mdap/maker"

// AdaptiveFromK turns a pure per-step margin function, such as
// maker.AdaptiveK's K method, into Options.Adaptive. newK gets the task's
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

// DefaultAdaptive is maker.AdaptiveK with its defaults (floor 2, max 30,
// 95% confidence) planning for steps steps at target: the adaptive row of
// the strategies suite.
var DefaultAdaptive = AdaptiveFromK(func(steps int, target float64) (func(step, winnerVotes, valid int) int, error) {
	a, err := maker.AdaptiveK{Target: target, Steps: steps}.WithDefaults()
	if err != nil {
		return nil, err
	}
	return a.K, nil
})
