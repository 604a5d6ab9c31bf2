package maker_test

import (
	"context"
	"fmt"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
)

// A run whose k follows the model: each step's k is the smallest that
// keeps the remaining steps right with probability 0.95, for a lower
// bound on p learned from the votes so far.
func ExampleAdaptiveK() {
	task, err := hanoi.New(8)
	if err != nil {
		panic(err)
	}
	model, err := sim.New(hanoi.Oracle{}, sim.Config{P: 0.95, WrongAnswers: 1, Seed: 1})
	if err != nil {
		panic(err)
	}
	policy := &maker.AdaptiveK{Target: 0.95, Steps: hanoi.TotalSteps(8)}
	s := &maker.Solver{Model: model, AdaptiveK: policy}
	rep, err := s.Solve(context.Background(), task)
	if err != nil {
		panic(err)
	}
	e := policy.Estimate(rep)
	fmt.Printf("solved %v, %d wrong steps\n", task.Solved(), task.WrongSteps())
	fmt.Printf("p estimate %.3f, lower bound %.3f\n", e.P, e.Lower)
	fmt.Println("steps by k:", rep.KHistogram)
	// Output:
	// solved true, 0 wrong steps
	// p estimate 0.957, lower bound 0.945
	// steps by k: map[2:15 3:168 4:69 5:2 30:1]
}
