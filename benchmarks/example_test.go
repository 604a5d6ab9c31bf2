package benchmarks_test

import (
	"context"
	"fmt"

	"github.com/mdap-go/mdap/benchmarks"
)

// Run one suite at its quick size and read its rows; rep.WriteDir(dir)
// would write REPORT.md, report.json and the charts.
func ExampleRun() {
	rep, err := benchmarks.Run(context.Background(), benchmarks.Options{Suites: []string{"real"}, Quick: true, Seed: 1})
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Real.Rows {
		fmt.Printf("%s: run %v, solved %v\n", r.Transport, r.NotRun == "", r.Solved)
	}
	// Output:
	// in-process: run true, solved true
	// HTTP (serve-sim, langchaingo openai): run true, solved true
	// NATS engine (maker/cluster): run true, solved true
}
