package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker problem --ui, as maker multiply --ui: the page counts the
// spec's decisions, samples and cost from the journal while the run
// goes, under the spec's name, and ends on the numbers of its summary;
// --ui without --journal exits 2.
func TestBinaryProblemUI(t *testing.T) {
	t.Parallel()
	spec := filepath.Join(problemSpecs, "sort-spec.json")
	j := filepath.Join(t.TempDir(), "p.jsonl")
	c := start(t, nil, "problem", "--spec", spec, "--input", `{"list": [9, 4, 7, 1, 8, 2, 6, 3, 5, 0]}`, "--latency", "20ms",
		"--journal", j, "--json", "--ui", "127.0.0.1:0")
	base, token := viewURL(t, c), viewToken(t, c)
	req, err := http.NewRequest(http.MethodGet, base+"events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	type task struct {
		Name    string  `json:"name"`
		Steps   int     `json:"steps"`
		Samples int     `json:"samples"`
		Cost    float64 `json:"cost"`
	}
	var seen []task
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() { // until the run ends
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			var b struct {
				List []task `json:"list"`
			}
			require.NoError(t, json.Unmarshal([]byte(line[len("data: "):]), &b))
			require.Len(t, b.List, 1)
			seen = append(seen, b.List[0])
		}
	}
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	require.GreaterOrEqual(t, len(seen), 3, "several updates while it ran")
	first, last := seen[0], seen[len(seen)-1]
	assert.Equal(t, "sort-spec", last.Name, "the spec's name")
	assert.Less(t, first.Steps, last.Steps, "the counters advance")
	var sum struct {
		Solved  bool `json:"solved"`
		Samples int  `json:"samples"`
		Roles   map[string]struct {
			Decisions int `json:"decisions"`
		} `json:"roles"`
	}
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &sum), c.stdout.String())
	assert.True(t, sum.Solved)
	decisions := 0
	for _, r := range sum.Roles {
		decisions += r.Decisions
	}
	assert.Equal(t, sum.Samples, last.Samples, "the last update is the run's own count")
	assert.Equal(t, decisions, last.Steps, "and its decisions")

	c = start(t, nil, "problem", "--spec", spec, "--input", `{"list": [2, 1]}`, "--ui", "127.0.0.1:0")
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "give --journal FILE")
}
