package batch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/hanoi"
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
	// typo  invalid steps  0  bad task line: line 3: unknown field "colour"; the fields are id, spec, input, hanoi, multiply, sort, problem, task, k, root, tools, seed, max_steps, max_samples, max_errors
	// solved 2 of 3; every task solved: false
}

// Two solvers of a library user's own share one set of provider limits:
// together they never have more than two calls in flight.
func ExampleLimits_Wrap() {
	limits, err := batch.NewLimits(batch.LimitConfig{MaxInFlight: 2, RPM: 6000, Burst: 10})
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	for _, disks := range []int{4, 5} {
		wg.Go(func() {
			cfg := sim.DefaultConfig()
			cfg.Latency = sim.FixedLatency(time.Millisecond)
			model, err := sim.New(hanoi.Oracle{}, cfg)
			if err != nil {
				panic(err)
			}
			task, err := hanoi.New(disks)
			if err != nil {
				panic(err)
			}
			s := &maker.Solver{Model: limits.Wrap(model)}
			if _, err := s.Solve(context.Background(), task); err != nil {
				panic(err)
			}
		})
	}
	wg.Wait()
	st := limits.Stats()
	fmt.Println("calls:", st.Calls)
	fmt.Println("at most 2 in flight:", st.PeakInFlight <= 2)
	// Output:
	// calls: 138
	// at most 2 in flight: true
}

// A tasks file is read strictly; a bad line becomes a job with Err set,
// naming its line, and the other lines are read on.
func ExampleReadJobs() {
	jobs, err := batch.ReadJobs(strings.NewReader(`{"id": "v1", "spec": "specs/find-version.json", "k": 5}
{"id": "h12", "hanoi": {"disks": 12}}
{"id": "v1", "hanoi": {"disks": 3}}
`), "/work/tasks")
	if err != nil {
		panic(err)
	}
	for _, j := range jobs {
		if j.Err != nil {
			fmt.Println(j.Err)
			continue
		}
		fmt.Println(j.Line, j.ID, j.Kind())
	}
	fmt.Println(jobs[0].Path(jobs[0].Spec))
	// Output:
	// 1 v1 spec
	// 2 h12 hanoi
	// bad task line: line 3: id "v1" is already used by line 1; give every task a unique id
	// /work/tasks/specs/find-version.json
}
