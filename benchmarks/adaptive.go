package benchmarks

// AdaptiveFromK turns a pure per-step margin function, such as
// maker.AdaptiveK's K method, into Options.Adaptive. newK gets the task's
// steps and the target and returns the function.
//
// HOOK(calibrate): once maker.AdaptiveK is on main, `maker bench` wires the
// adaptive row with
//
//	opts.Adaptive = benchmarks.AdaptiveFromK(func(steps int, target float64) (func(step, winnerVotes, valid int) int, error) {
//		a, err := maker.AdaptiveK{Target: target, Steps: steps}.WithDefaults()
//		return a.K, err
//	})
//
// and until then the row reads "not run".
func AdaptiveFromK(newK func(steps int, target float64) (func(step, winnerVotes, valid int) int, error)) func(steps int, target float64) (MarginPolicy, error) {
	return func(steps int, target float64) (MarginPolicy, error) {
		k, err := newK(steps, target)
		if err != nil {
			return nil, err
		}
		return MarginPolicy(k), nil
	}
}
