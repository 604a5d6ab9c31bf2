package view_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/view"
	"github.com/mdap-go/mdap/vote"
)

// When the server closes (a --ui run ended), each event stream sends the
// run's last state before it ends, though the steps came within the
// stream's throttle: the page ends on the numbers the journal holds.
func TestCloseSendsTheLastState(t *testing.T) {
	t.Parallel()
	run := view.NewRun(view.Info{Task: "hanoi:N=3", K: 3, Total: 7})
	ln, err := view.Listen("127.0.0.1:0")
	require.NoError(t, err)
	h, err := view.Handler(view.Config{Run: run})
	require.NoError(t, err)
	s := view.Serve(ln, h)
	resp, err := http.Get("http://" + s.Addr() + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	next := func() (view.Stats, bool) {
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, `data: {"source"`) {
				var st view.Stats
				require.NoError(t, json.Unmarshal([]byte(line[len("data: "):]), &st))
				return st, true
			}
		}
		return view.Stats{}, false
	}
	first, ok := next()
	require.True(t, ok)
	assert.Equal(t, 0, first.Steps)
	for step := range 7 { // within the 200 ms the stream waits between updates
		run.Add(&journal.StepRecord{Step: step, K: 3, Key: "a", Votes: map[string]int{"a": 3}, Counts: vote.Counts{Valid: 3}})
	}
	require.NoError(t, s.Close())
	last := first
	for st, ok := next(); ok; st, ok = next() {
		last = st
	}
	assert.Equal(t, 7, last.Steps, "the last state was sent")
	assert.True(t, last.Done)
}
