package rivals_test

import (
	"fmt"

	"github.com/mdap-go/mdap/vote/laws"
	"github.com/mdap-go/mdap/vote/rivals"
)

func ExampleExpectedSamples() {
	// k = 2, p = 0.75: one rival answer, or the same wrong votes spread
	// uniformly over eight wrong answers.
	one := laws.ExpectedSamples(0.75, 2)
	spread, err := rivals.ExpectedSamples(0.75, 2, rivals.Spread{N: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	right, _ := rivals.PStep(0.75, 2, rivals.Spread{N: 8})
	fmt.Printf("votes per step: %.3f against one rival, %.3f against eight (%+.1f%%)\n", one, spread, 100*(spread/one-1))
	fmt.Printf("right answer wins: %.3f against one rival, %.3f against eight\n", laws.PStep(0.75, 2), right)
	// Output:
	// votes per step: 3.200 against one rival, 3.291 against eight (+2.8%)
	// right answer wins: 0.900 against one rival, 0.991 against eight
}
