package main

import (
	"testing"

	"github.com/mdap-go/mdap/benchmarks"
	"github.com/stretchr/testify/assert"
)

// TestBenchDocNamesEverySuite: docs/bench.md's flag table gives the values
// of --suite ("repeatable or comma-separated", all by default) and its
// list describes "The suites:". Both must name every suite maker bench
// runs (benchmarks.Suites), so a suite added to the code is added to the
// page.
func TestBenchDocNamesEverySuite(t *testing.T) {
	doc := string(mustRead(t, "../../docs/bench.md"))
	row := docRow(t, doc, "| `--suite NAME` |")
	for _, name := range benchmarks.Suites {
		assert.Contains(t, row, "`"+name+"`", "the --suite row does not name %s", name)
		assert.Contains(t, doc, "\n- **"+name+"**", "the list of suites does not describe %s", name)
	}
}
