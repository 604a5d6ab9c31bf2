package laws_test

import (
	"fmt"

	"github.com/mdap-go/mdap/vote/laws"
)

func ExampleKMin() {
	// The paper's Towers of Hanoi: 20 disks, 2^20 - 1 steps, 95% target.
	const steps = 1<<20 - 1
	for _, p := range []float64{0.9978, 0.6429} {
		k, err := laws.KMin(steps, p, 0.95)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("p=%.4f: k_min=%d, p_full=%.4f (k-1: %.4f), %.2f votes per step\n",
			p, k, laws.PFull(steps, k, p), laws.PFull(steps, k-1, p), laws.ExpectedSamples(p, k))
	}
	// Output:
	// p=0.9978: k_min=3, p_full=0.9888 (k-1: 0.0061), 3.01 votes per step
	// p=0.6429: k_min=29, p_full=0.9596 (k-1: 0.9284), 101.47 votes per step
}
