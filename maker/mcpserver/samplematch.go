package mcpserver

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/vote"
)

// answerMatcher builds the matcher an answer_schema declares; nil for
// none. Errors wrap ErrArgument.
func answerMatcher(schema any) (*match.Matcher, error) {
	if schema == nil {
		return nil, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: answer_schema: %w", ErrArgument, err)
	}
	// A client's schema may not make the server call a model or run a
	// command: embedding and judge fields need the server's own.
	m, err := match.NewWith(raw, match.Options{NoModels: true})
	if err != nil {
		return nil, fmt.Errorf("%w: answer_schema: %w", ErrArgument, err)
	}
	return m, nil
}

// drawnMatch is the race's Match for sample_and_vote's samples: nil
// unless m has a number tolerance (its other matchers are in the keys).
func drawnMatch(m *match.Matcher) vote.Match[drawn] {
	if !m.Tolerant() {
		return nil
	}
	return func(a, b drawn) bool { return m.Match(*a.out, *b.out) }
}

// classify gives each counted valid sample the class key the race counted
// it under (vote.Classify in index order), so that the samples' keys add
// up to the race's votes. Nothing to do without a match.
func classify(samples []SampleInfo, vals []drawn, committed int, match vote.Match[drawn]) {
	if match == nil {
		return
	}
	var keys []uint64
	var vs []drawn
	var at []int
	for i := range min(committed, len(samples)) {
		if samples[i].Key == "" || vals[i].out == nil {
			continue
		}
		k, _ := strconv.ParseUint(samples[i].Key, 16, 64)
		keys, vs, at = append(keys, k), append(vs, vals[i]), append(at, i)
	}
	for j, k := range vote.Classify(keys, vs, match) {
		samples[at[j]].Key = hexKey(k)
	}
}
