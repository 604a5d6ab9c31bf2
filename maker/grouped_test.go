package maker_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// slowModel answers after a pause, so that the draws of a wave overlap.
type slowModel struct{ llms.Model }

func (m slowModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	time.Sleep(2 * time.Millisecond)
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

// goroutineID is the calling goroutine's id, read from its stack header.
func goroutineID() string {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	var id string
	fmt.Sscanf(string(b[:n]), "goroutine %s", &id)
	return id
}

// groupedRun solves 4-disk Hanoi on m with samples per call and returns
// the goroutine each sample was drawn on, by step and index.
func groupedRun(t *testing.T, m llms.Model, v vote.Config) map[maker.SampleID]string {
	t.Helper()
	task, err := hanoi.New(4)
	require.NoError(t, err)
	var mu sync.Mutex
	on := map[maker.SampleID]string{}
	s := &maker.Solver{Model: m, Vote: v, SamplesPerCall: maker.SamplesPerCallAuto, OnSample: func(e maker.SampleEvent) {
		mu.Lock()
		on[maker.SampleID{Step: e.Step, Index: e.Index}] = goroutineID()
		mu.Unlock()
	}}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.True(t, rep.Done)
	return on
}

// TestSamplesPerCallDrawsARequestsSamplesInTurn: the samples one request
// serves are drawn one after another on the goroutine that made the
// request (vote.RaceGrouped), not each on a worker of its own waiting for
// it; the request of another temperature runs beside them.
func TestSamplesPerCallDrawsARequestsSamplesInTurn(t *testing.T) {
	m := &recordingModel{Model: slowModel{perCallSim(t, false)}}
	on := groupedRun(t, m, vote.Config{K: 3})
	batched, before := 0, true
	for _, r := range m.reqs {
		if r.n < 2 {
			continue
		}
		if before { // n not yet known to be honoured: drawn apart
			before = false
			continue
		}
		batched++
		for j := 1; j < r.n; j++ {
			id := maker.SampleID{Step: r.id.Step, Index: r.id.Index + j}
			assert.Equal(t, on[r.id], on[id], "sample %+v drawn apart from its request's first, %+v", id, r.id)
		}
		if r.id.Index == 1 { // the first wave: sample 0 is drawn meanwhile
			first := maker.SampleID{Step: r.id.Step, Index: 0}
			assert.NotEqual(t, on[first], on[r.id], "step %d: the temperature-0 request waited for the others", r.id.Step)
		}
	}
	assert.Positive(t, batched)
}

// TestSamplesPerCallIgnoredNDrawsApart: once the provider is known to
// ignore n, every sample is a call of its own, and the samples of a wave
// are drawn each on its own goroutine again, not one call after another.
func TestSamplesPerCallIgnoredNDrawsApart(t *testing.T) {
	m := &recordingModel{Model: slowModel{perCallSim(t, true)}}
	on := groupedRun(t, m, vote.Config{K: 3})
	short := -1
	for _, r := range m.reqs {
		if r.n > 1 {
			short = r.id.Step
		}
	}
	require.GreaterOrEqual(t, short, 0, "n asked once")
	apart := 0
	for id, g := range on {
		if id.Step >= short && id.Index == 1 { // the short step too: its missing choices' calls run apart
			if two, ok := on[maker.SampleID{Step: id.Step, Index: 2}]; ok {
				assert.NotEqual(t, g, two, "step %d: samples 1 and 2, calls of their own, drawn in turn", id.Step)
				apart++
			}
		}
	}
	assert.Positive(t, apart)
}
