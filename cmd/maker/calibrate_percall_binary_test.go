package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryCalibrateSamplesPerCall: maker calibrate --samples-per-call 5
// --samples 10 against serve-sim sends each sampled step three requests,
// of n 1, 5 and 4 (a run's wave of 10: sample 0, at temperature 0, a
// request of its own), and --samples-per-call 1 sends ten of n 1; the
// estimate is the same (the same samples). Calibration drawing one sample
// a request whatever --samples-per-call says fails the first count.
func TestBinaryCalibrateSamplesPerCall(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 2, 0.8, 0
	s, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	var mu sync.Mutex
	var ns []int
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req struct{ N *int }
		if json.Unmarshal(body, &req) == nil && r.URL.Path == "/v1/chat/completions" {
			n := 1
			if req.N != nil {
				n = *req.N
			}
			mu.Lock()
			ns = append(ns, n)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	const steps = 4
	estimates := map[string]calibrate.Estimate{}
	for _, per := range []string{"5", "1"} {
		mu.Lock()
		ns = nil
		mu.Unlock()
		code, js, errOut := childCLI(t, "calibrate", "--disks", "5", "--steps-sampled", "4", "--samples", "10", "--progress", "off",
			"--model", "openai:sim", "--base-url", hs.URL+"/v1", "--samples-per-call", per, "--json")
		require.Contains(t, []int{0, 1}, code, errOut) // a few steps: k may be undecided; the requests are what is checked
		var rep calibrate.Report
		require.NoError(t, json.Unmarshal([]byte(js), &rep), errOut)
		require.Equal(t, steps*10, rep.All.Samples)
		estimates[per] = rep.All
		mu.Lock()
		got := slices.Clone(ns)
		mu.Unlock()
		slices.Sort(got)
		want := slices.Repeat([]int{1}, steps*10)
		if per == "5" {
			want = slices.Concat(slices.Repeat([]int{1}, steps), slices.Repeat([]int{4}, steps), slices.Repeat([]int{5}, steps))
		}
		assert.Equal(t, want, got, "--samples-per-call %s: the n of every request", per)
	}
	assert.Equal(t, estimates["1"].Correct, estimates["5"].Correct, "the same samples")
	assert.Equal(t, estimates["1"].Wrong, estimates["5"].Wrong)
	assert.Less(t, estimates["5"].Correct, estimates["5"].Samples, "the model errs: the comparison is not trivial")
}
