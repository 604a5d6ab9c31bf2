package mcpserver

import (
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
)

// matchCandidates gives each voting candidate of the vote tool the class
// key it has under the matchers schema declares (match.New), in
// candidate order, by vote.Classify: the classes a race tallying the
// candidates in that order forms, so the plain race that follows decides
// as vote.RaceMatching would. No schema leaves the keys as they are.
// Errors wrap ErrArgument: a schema that is not JSON or has a bad
// annotation.
func matchCandidates(schema any, samples []vote.Sample[int], replies []ReplyVerdict) error {
	m, err := answerMatcher(schema)
	if err != nil {
		return err
	}
	if m == nil {
		return nil
	}
	var keys []uint64
	var outs []intent.Output
	var at []int
	for i, sm := range samples {
		if sm.Flag != nil || replies[i].Output == nil {
			continue
		}
		k, err := m.Key(*replies[i].Output)
		if err != nil {
			return fmt.Errorf("%w: candidate %d: %w", ErrArgument, i, err)
		}
		keys, outs, at = append(keys, k), append(outs, *replies[i].Output), append(at, i)
	}
	var match vote.Match[intent.Output]
	if m.Tolerant() {
		match = m.Match
	}
	for j, k := range vote.Classify(keys, outs, match) {
		i := at[j]
		samples[i].Key = k
		replies[i].Key = hexKey(k)
	}
	return nil
}
