package calibrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/openai" // openai:
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// sentRequest is a request a loopback server saw: its prompt's hash (the
// step), the sample index of its first choice (its seed less one, as
// maker.Solver sends it), the choices it asked for (n) and its
// temperature.
type sentRequest struct {
	Step        uint64
	First, N    int
	Temperature float64
}

// nServer is an OpenAI-compatible loopback server of the simulated model
// on Hanoi that records every request. It honours n (choice j is the
// sample of index First+j, as maker/simserver serves it) unless ignoreN,
// when it answers every request with one choice.
type nServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []sentRequest
}

func newNServer(t *testing.T, p float64, ignoreN bool) *nServer {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 3, p, 0
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	s := &nServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role, Content string
			}
			N           *int
			Seed        *int
			Temperature float64
			MaxTokens   int `json:"max_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Seed == nil {
			http.Error(w, fmt.Sprintf("bad request (a seed is required): %v", err), http.StatusBadRequest)
			return
		}
		n := 1
		if req.N != nil {
			n = *req.N
		}
		var msgs []llms.MessageContent
		h := fnv.New64a()
		for _, m := range req.Messages {
			role := llms.ChatMessageTypeHuman
			switch m.Role {
			case "system":
				role = llms.ChatMessageTypeSystem
			case "assistant":
				role = llms.ChatMessageTypeAI
			}
			msgs = append(msgs, llms.TextParts(role, m.Content))
			_, _ = h.Write([]byte(m.Role + "\x00" + m.Content + "\x00"))
		}
		step := h.Sum64()
		s.mu.Lock()
		s.seen = append(s.seen, sentRequest{Step: step, First: *req.Seed - 1, N: n, Temperature: req.Temperature})
		s.mu.Unlock()
		answer := n
		if ignoreN {
			answer = 1
		}
		type choice struct {
			Index        int               `json:"index"`
			Message      map[string]string `json:"message"`
			FinishReason string            `json:"finish_reason"`
		}
		out := struct {
			ID      string         `json:"id"`
			Object  string         `json:"object"`
			Model   string         `json:"model"`
			Choices []choice       `json:"choices"`
			Usage   map[string]int `json:"usage"`
		}{ID: "x", Object: "chat.completion", Model: "sim", Usage: map[string]int{"prompt_tokens": 100, "completion_tokens": 10 * answer, "total_tokens": 100 + 10*answer}}
		for j := range answer {
			ctx := maker.WithSampleID(r.Context(), maker.SampleID{Step: int(step >> 1), Index: *req.Seed - 1 + j})
			resp, err := m.GenerateContent(ctx, msgs, llms.WithMaxTokens(req.MaxTokens))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			out.Choices = append(out.Choices, choice{Index: j, Message: map[string]string{"role": "assistant", "content": resp.Choices[0].Content}, FinishReason: "stop"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(s.Close)
	return s
}

// model is a client of the server, as `--model openai:sim;base=...` opens.
func (s *nServer) model(t *testing.T) llms.Model {
	t.Helper()
	m, err := models.Open("openai:sim;base="+s.URL+"/v1", models.Options{})
	require.NoError(t, err)
	return m
}

// requests returns what the server saw, per step, in a canonical order,
// and forgets it.
func (s *nServer) requests() map[uint64][]sentRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[uint64][]sentRequest{}
	for _, r := range s.seen {
		out[r.Step] = append(out[r.Step], r)
	}
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b sentRequest) int { return a.First - b.First })
	}
	s.seen = nil
	return out
}

// TestCalibrateSendsTheRunsRequests: calibrate with SamplesPerCall 5 and
// 10 samples a step sends each sampled step the requests a run's first
// wave of 10 sends it (K 10, a model that never errs, so a step is one
// wave): the same count, the same first indices, the same n and
// temperatures, 1 + 5 + 4 (sample 0 at temperature 0 a request of its
// own). Calibration drawing one sample a request (the old behaviour)
// sends 10 requests of n 1 a step and fails.
func TestCalibrateSendsTheRunsRequests(t *testing.T) {
	t.Parallel()
	const disks, perCall, samples = 4, 5, 10
	srv := newNServer(t, 1, false)
	task, err := hanoi.New(disks)
	require.NoError(t, err)
	run := &maker.Solver{Config: maker.Config{SamplesPerCall: perCall, Vote: vote.Config{K: samples, Parallel: samples}}, Model: srv.model(t)}
	rep, err := run.Solve(context.Background(), task)
	require.NoError(t, err)
	require.True(t, rep.Done)
	ran := srv.requests()
	require.Len(t, ran, hanoi.TotalSteps(disks), "every step of the run is a prompt of its own")

	steps, err := calibrate.Hanoi(disks)
	require.NoError(t, err)
	cal := &maker.Solver{Config: maker.Config{SamplesPerCall: perCall}, Model: srv.model(t)}
	// NoPlan: the requests are what this shows, and the plan sends none.
	crep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: cal, StepsSampled: 6, Samples: samples, SamplesPerCall: perCall, Parallel: 4, NoPlan: true})
	require.NoError(t, err)
	require.Equal(t, 6*samples, crep.All.Samples)
	assert.Equal(t, 6*samples, crep.All.Correct, "a model that never errs")
	// The server bills 100 prompt tokens a request: the estimate takes a
	// sample's prompt as a request of its own (the plans bill it once a
	// request of the run themselves), not the 30 a sample it paid here.
	assert.InDelta(t, 100, crep.All.InputTokens, 1e-9)
	calibrated := srv.requests()
	require.Len(t, calibrated, 6, "the sampled steps")
	for step, rs := range calibrated {
		want, ok := ran[step]
		require.True(t, ok, "calibration's prompt %x is a prompt of the run", step)
		assert.Equal(t, want, rs, "step %x: the run's first wave's requests", step)
		var ns []int
		for _, r := range rs {
			ns = append(ns, r.N)
		}
		assert.Equal(t, []int{1, 5, 4}, ns, "step %x", step)
		assert.Zero(t, rs[0].Temperature, "sample 0 at temperature 0, alone")
	}
}

// TestCalibrateProviderIgnoresN: a provider that answers one choice
// whatever n asks gets the samples one a request after its first short
// answer (none asks n > 1 after it), every sample index exactly once,
// and the calibration is the one a provider honouring n gives (the same
// estimate: the counts, p, its interval, the spread fitted to each
// step's tally and the repeats of wrong answers; NoPlan spares the plan,
// seconds race-built, which is a function of those and sends nothing).
// A calibration that did not fall back (taking the short request's one
// choice for all of its samples, or never asking again) fails the
// counts.
func TestCalibrateProviderIgnoresN(t *testing.T) {
	t.Parallel()
	const disks, perCall, samples, stepsSampled = 5, 5, 10, 8
	steps, err := calibrate.Hanoi(disks)
	require.NoError(t, err)
	calibrateOn := func(srv *nServer) calibrate.Report {
		rep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: &maker.Solver{Config: maker.Config{SamplesPerCall: perCall}, Model: srv.model(t)},
			StepsSampled: stepsSampled, Samples: samples, SamplesPerCall: perCall, Parallel: 4, Seed: 7, NoPlan: true})
		require.NoError(t, err)
		return rep
	}
	honours := newNServer(t, 0.8, false)
	want := calibrateOn(honours)
	honoured := honours.requests()
	ignores := newNServer(t, 0.8, true)
	got := calibrateOn(ignores)
	seen := ignores.requests()

	assert.Equal(t, want.All.Correct, got.All.Correct)
	assert.Equal(t, want.All.Wrong, got.All.Wrong)
	assert.Equal(t, want.All.P, got.All.P)
	assert.Equal(t, want.All.Low, got.All.Low)
	assert.Equal(t, want.All.High, got.All.High)
	require.NotNil(t, want.All.Spread, "the spread is fitted without a plan")
	assert.Equal(t, want.All.Spread, got.All.Spread)
	assert.Equal(t, want.All.HardSteps, got.All.HardSteps)
	assert.Equal(t, want.All.Repeat, got.All.Repeat)
	assert.Less(t, want.All.Correct, want.All.Samples, "the model errs: the estimate is not trivial")

	// The honouring provider: 3 requests a step, n 1, 5, 4.
	require.Len(t, honoured, stepsSampled)
	for _, rs := range honoured {
		assert.Len(t, rs, 3)
	}
	// The ignoring one: each sample index served exactly once, by the
	// one choice of a request; n > 1 only on requests sent before the
	// calibration could have seen a short answer (at most Parallel).
	require.Len(t, seen, stepsSampled)
	asked := 0
	for step, rs := range seen {
		var idx []int
		for _, r := range rs {
			idx = append(idx, r.First)
			if r.N > 1 {
				asked++
			}
		}
		slices.Sort(idx)
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, idx, "step %x: every sample its own request, once", step)
	}
	assert.Positive(t, asked, "n was asked before the provider was seen to ignore it")
	assert.LessOrEqual(t, asked, 4, "n > 1 asked after the first short answer: %d requests", asked)
}

// TestCalibrateEnsembleOneSampleARequest: an ensemble's members are
// separate models, so calibration, as its run, sends their samples one a
// request whatever SamplesPerCall says. The requests are what it shows:
// NoPlan spares the plan (seconds race-built), which sends none.
func TestCalibrateEnsembleOneSampleARequest(t *testing.T) {
	t.Parallel()
	srv := newNServer(t, 0.9, false)
	ens, err := maker.NewEnsemble(srv.model(t), srv.model(t))
	require.NoError(t, err)
	steps, err := calibrate.Hanoi(4)
	require.NoError(t, err)
	_, err = calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: &maker.Solver{Config: maker.Config{SamplesPerCall: 5}, Model: ens},
		StepsSampled: 3, Samples: 10, SamplesPerCall: 5, Parallel: 4, NoPlan: true})
	require.NoError(t, err)
	seen := srv.requests()
	require.Len(t, seen, 3)
	for step, rs := range seen {
		assert.Len(t, rs, 10, "step %x: one request a sample", step)
		for _, r := range rs {
			assert.Equal(t, 1, r.N, "step %x", step)
		}
	}
}
