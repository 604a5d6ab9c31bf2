package batch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/tmc/langchaingo/llms"
)

// A batch of Towers of Hanoi tasks on the simulated model, two at a
// time, with shared provider limits and results kept in a store that a
// second run would resume from.
func ExampleRunner_Run() {
	tasks := `{"id": "small", "hanoi": {"disks": 3}}
{"id": "large", "hanoi": {"disks": 6}, "k": 4}
{"id": "typo", "hanoi": {"disks": 3}, "colour": "red"}
`
	jobs, err := batch.ReadJobs(strings.NewReader(tasks), ".")
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "batch-example-")
	defer os.RemoveAll(dir)
	store, err := batch.OpenStore(filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "state"))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	limits, err := batch.NewLimits(batch.LimitConfig{MaxInFlight: 4})
	if err != nil {
		panic(err)
	}
	builder := &batch.Builtin{Seed: 1, Model: func(_ batch.Job, oracle sim.Oracle, seed uint64) (llms.Model, error) {
		cfg := sim.DefaultConfig()
		cfg.Seed = seed
		return sim.New(oracle, cfg)
	}}
	r := &batch.Runner{Build: builder.Build, Concurrency: 2, Limits: limits, Store: store}
	sum, err := r.Run(context.Background(), jobs)
	if err != nil {
		panic(err)
	}
	for _, res := range sum.Results {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-5s %-7s steps %2d  %s", res.ID, res.Status, res.Steps, res.Error)))
	}
	fmt.Printf("solved %d of %d; every task solved: %v\n", sum.Solved, sum.Tasks, sum.OK())
	// Output:
	// small solved  steps  7
	// large solved  steps 63
	// typo  invalid steps  0  bad task line: line 3: unknown field "colour"; the fields are id, spec, hanoi, task, k, root, tools, seed, max_steps, max_samples, max_errors
	// solved 2 of 3; every task solved: false
}
