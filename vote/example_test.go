package vote_test

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/mdap-go/mdap/vote"
)

func ExampleRace() {
	// Sample i of a step, as a function of i alone (a real drawer calls a
	// model; the simulated one seeds its randomness with the step and i).
	answers := []string{"move 1 to C", "move 1 to B", "move 1 to C", "move 1 to C", "move 1 to C"}
	draw := func(ctx context.Context, i int) vote.Sample[string] {
		a := answers[i%len(answers)]
		h := fnv.New64a()
		h.Write([]byte(a))
		return vote.Sample[string]{Value: a, Key: h.Sum64(), Usage: vote.Usage{InputTokens: 120, OutputTokens: 8}}
	}

	// The zero Config: K = 3, three draws in the first wave.
	res, err := vote.Race(context.Background(), vote.Config{}, draw)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d votes to %d after %d samples\n", res.Winner, res.Votes[res.Key], res.Valid-res.Votes[res.Key], res.Launched)
	fmt.Printf("tokens: %d in, %d out\n", res.Usage.InputTokens, res.Usage.OutputTokens)
	// Output:
	// move 1 to C: 4 votes to 1 after 5 samples
	// tokens: 600 in, 40 out
}

func ExampleRace_undecided() {
	// Two answers in turn: no lead of 3 can ever form.
	draw := func(ctx context.Context, i int) vote.Sample[int] {
		return vote.Sample[int]{Value: i % 2, Key: uint64(1 + i%2)}
	}
	_, err := vote.Race(context.Background(), vote.Config{MaxSamples: 10}, draw)
	fmt.Println(err)
	// Output:
	// vote: undecided: budget of 10 samples spent without a lead of 3 (10 valid, 0 flagged, 0 errors; top key 5 votes, next 5)
}
