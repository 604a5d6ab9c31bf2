package multiply_test

import (
	"context"
	"fmt"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
)

// Example solves a 6×6-digit multiplication by voted decomposition, with
// the simulated model playing every role at p 0.9, T 0.95.
func Example() {
	fam := multiply.Family{}
	sims, err := decompose.NewSim(fam, fam, decompose.SimConfig{Seed: 1})
	if err != nil {
		panic(err)
	}
	res, err := decompose.Solve(context.Background(), fam, []byte(`{"a": "123456", "b": "654321"}`),
		decompose.Config{Models: sims.Models(), Settings: decompose.Settings{Target: 0.95}})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Answer), *res.Correct, res.Plan.K[decompose.RoleSolve])
	// Output: "80779853376" true 4
}
