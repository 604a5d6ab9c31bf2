package adaptive_test

import (
	"context"
	"fmt"
	"github.com/mdap-go/mdap/maker/adaptive"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
)

// A run whose k follows the model: each step's k is the smallest that
// keeps the failure spent so far plus the remaining steps' within the
// budget 1 - 0.95, for a lower bound on p learned from the votes so far
// (here from correctness: Hanoi checks its answers).
func ExamplePolicy() {
	task, err := hanoi.New(8)
	if err != nil {
		panic(err)
	}
	model, err := sim.New(hanoi.Oracle{}, sim.Config{P: 0.95, WrongAnswers: 1, Seed: 1})
	if err != nil {
		panic(err)
	}
	policy := &adaptive.Policy{Target: 0.95, Steps: hanoi.TotalSteps(8)}
	s := &maker.Solver{Config: maker.Config{AdaptiveK: policy}, Model: model}
	rep, err := s.Solve(context.Background(), task)
	if err != nil {
		panic(err)
	}
	e := policy.Estimate(rep)
	fmt.Printf("solved %v, %d wrong steps\n", task.Solved(), task.WrongSteps())
	fmt.Printf("p estimate %.3f from %s, lower bound %.3f\n", e.P, e.Source, e.Lower)
	fmt.Printf("failure budget spent %.4f of %.4f\n", e.Spent, e.Budget)
	fmt.Println("steps by k:", rep.KHistogram)
	// Output:
	// solved true, 0 wrong steps
	// p estimate 0.961 from correctness, lower bound 0.948
	// failure budget spent 0.0034 of 0.0125
	// steps by k: map[4:226 5:27 6:1 30:1]
}
