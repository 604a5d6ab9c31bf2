package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker hanoi --nats --ui: the page shows the route the samples go over
// and the workers serving it, each worker's samples counted from the
// replies (every sample of a decided step is one of them), and the votes
// its answers lost.
func TestBinaryNATSUIShowsWorkers(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	w := startWorker(t, url)
	defer stopWorkers(t, w)
	journal := filepath.Join(t.TempDir(), "run.jsonl")
	c := start(t, nil, append([]string{"hanoi", "--disks", "7", "--nats", url, "--ui", "127.0.0.1:0", "--progress", "off", "--journal", journal}, natsSim...)...)
	base, token := viewURL(t, c), viewToken(t, c)
	req, err := http.NewRequest(http.MethodGet, base+"events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var last struct {
		Steps   int    `json:"steps"`
		Samples int    `json:"samples"`
		Remote  string `json:"remote"`
		Workers []struct {
			Worker  string `json:"worker"`
			Samples int    `json:"samples"`
			Valid   int    `json:"valid"`
			Lost    int    `json:"lost"`
		} `json:"workers"`
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() { // until the run ends
		if line := sc.Text(); strings.HasPrefix(line, `data: {"source"`) {
			require.NoError(t, json.Unmarshal([]byte(line[len("data: "):]), &last))
		}
	}
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	assert.Equal(t, 127, last.Steps)
	assert.Contains(t, last.Remote, "over NATS")
	require.NotEmpty(t, last.Workers, "the worker serving the route")
	samples, lost := 0, 0
	for _, w := range last.Workers {
		assert.NotEmpty(t, w.Worker)
		samples += w.Samples
		lost += w.Lost
	}
	assert.GreaterOrEqual(t, samples, last.Samples, "every sample of a decided step came from a worker (late ones too)")
	assert.Positive(t, lost, "p=0.9: some answers lost their step")

	// The journal keeps each sample's worker, for maker view JOURNAL.
	b, err := os.ReadFile(journal)
	require.NoError(t, err)
	steps, workers := 0, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		var rec struct {
			Step    *int `json:"step"`
			Samples []struct {
				Worker string `json:"worker"`
			} `json:"samples"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec.Step == nil {
			continue // a checkpoint
		}
		steps++
		require.NotEmpty(t, rec.Samples, "step %d", *rec.Step)
		for _, x := range rec.Samples {
			require.NotEmpty(t, x.Worker, "step %d", *rec.Step)
			workers[x.Worker] = true
		}
	}
	assert.Equal(t, 127, steps)
	for _, w := range last.Workers {
		assert.True(t, workers[w.Worker], "%s is named in the journal", w.Worker)
	}
}
