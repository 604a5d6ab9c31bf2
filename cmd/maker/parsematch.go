package main

import "github.com/mdap-go/mdap/maker"

// keyAsRun gives each voting line of parse the key a run of task votes
// it under: the spec's declared matchers group the replies, in the order
// given, as a race that tallied them in that order would.
func keyAsRun(task maker.Task, lines []parseLine) error {
	vs := make([]maker.Verdict, len(lines))
	for i, l := range lines {
		vs[i] = l.Verdict
	}
	if err := (&maker.Solver{}).KeyVerdicts(task, vs); err != nil {
		return err
	}
	for i := range lines {
		lines[i].Verdict = vs[i]
	}
	return nil
}
