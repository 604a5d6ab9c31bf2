package mcpserver

import (
	"context"
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/vote"
)

// matchCandidates gives each voting candidate of the vote tool the class
// key it has under the matchers schema declares (match.New, with own's
// embedder and judge), in candidate order, by vote.Classify: the
// classes a race tallying the candidates in that order forms, so the
// plain race that follows decides as a run's race (vote.RaceChoosing)
// would. No schema leaves the keys as they are. Errors wrap ErrArgument
// (a schema that is not JSON or has a bad annotation) or vote.ErrMatch
// (the embedder or judge failed).
func matchCandidates(ctx context.Context, schema any, own match.Options, samples []vote.Sample[int], replies []ReplyVerdict) error {
	m, err := answerMatcher(schema, own)
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
	classes, err := vote.Classify(keys, outs, matcherChoose(ctx, m, func(o intent.Output) intent.Output { return o }))
	if err != nil {
		return err
	}
	for j, k := range classes {
		i := at[j]
		samples[i].Key = k
		replies[i].Key = hexKey(k)
	}
	return nil
}
