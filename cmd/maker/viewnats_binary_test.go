package main

import (
	"bufio"
	"encoding/json"
	"net/http"
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
	c := start(t, nil, append([]string{"hanoi", "--disks", "7", "--nats", url, "--ui", "127.0.0.1:0", "--progress", "off"}, natsSim...)...)
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
}
