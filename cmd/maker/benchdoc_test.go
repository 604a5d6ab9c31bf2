package main

import (
	"strings"
	"testing"

	"github.com/mdap-go/mdap/benchmarks"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchDocNamesEverySuite: docs/bench.md's flag table gives the values
// of --suite ("repeatable or comma-separated", all by default) and its
// list describes "The suites:". Both must name every suite maker bench
// runs (benchmarks.Suites), so a suite added to the code is added to the
// page.
func TestBenchDocNamesEverySuite(t *testing.T) {
	doc := string(mustRead(t, "../../docs/bench.md"))
	var row string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `--suite NAME` |") {
			row = line
		}
	}
	require.NotEmpty(t, row, "docs/bench.md's row of --suite")
	for _, name := range benchmarks.Suites {
		assert.Contains(t, row, "`"+name+"`", "the --suite row does not name %s", name)
		assert.Contains(t, doc, "\n- **"+name+"**", "the list of suites does not describe %s", name)
	}
}
