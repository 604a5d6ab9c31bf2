package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/vote"
)

// answerMatcher builds the matcher an answer_schema declares; nil for
// none. A client's schema may not make the server call a model or run a
// command (match.Options.NoModels): its embedding and judge fields use
// the server's own (Config.Embedder, Config.Judge), and are refused
// where the server has none. Errors wrap ErrArgument.
func answerMatcher(schema any, own match.Options) (*match.Matcher, error) {
	if schema == nil {
		return nil, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: answer_schema: %w", ErrArgument, err)
	}
	m, err := match.NewWith(raw, match.Options{NoModels: true, Embedder: own.Embedder, Judge: own.Judge})
	if err != nil {
		return nil, fmt.Errorf("%w: answer_schema: %w", ErrArgument, err)
	}
	return m, nil
}

// matcherChoose is the race's Choose for values of type T under m, as a
// run's race has it (maker: vote.RaceChoosing with the matcher's Choose):
// nil unless m has a matcher beyond keys (a tolerance, an embedding, a
// judge), whose calls get ctx.
func matcherChoose[T any](ctx context.Context, m *match.Matcher, out func(T) intent.Output) vote.Choose[T] {
	if !m.Tolerant() {
		return nil
	}
	return func(reps []T, v T) (int, error) {
		os := make([]intent.Output, len(reps))
		for i, r := range reps {
			os[i] = out(r)
		}
		return m.Choose(ctx, os, out(v))
	}
}

// classify gives each counted valid sample the class key the race counted
// it under (vote.Tally.Classes: a key not in it is its own class's), so
// that the samples' keys add up to the race's votes without asking the
// matcher again.
func classify(samples []SampleInfo, committed int, classes map[uint64]uint64) {
	for i := range min(committed, len(samples)) {
		if samples[i].Key == "" {
			continue
		}
		k, _ := strconv.ParseUint(samples[i].Key, 16, 64)
		if class, ok := classes[k]; ok {
			samples[i].Key = hexKey(class)
		}
	}
}
