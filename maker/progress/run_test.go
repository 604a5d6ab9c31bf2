package progress

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run shows nothing unless asked: no bar off a terminal, no lines
// without Verbose.
func TestNewRunShowsNothingUnlessAsked(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	assert.Nil(t, NewRun(&buf, RunConfig{Mode: Auto, Total: 3}), "auto, not a terminal, not verbose")
	assert.Nil(t, NewRun(&buf, RunConfig{Mode: Off, Total: 3}))
	NewRun(&buf, RunConfig{Mode: Off}).Finish() // a nil Run finishes quietly
	onSample, onStep := NewRun(&buf, RunConfig{Mode: Off}).Hooks()
	assert.True(t, onSample == nil && onStep == nil, "a nil Run hooks nothing")
	r := NewRun(&buf, RunConfig{Mode: On, Total: 3})
	require.NotNil(t, r)
	onSample, onStep = r.Hooks()
	assert.True(t, onSample != nil && onStep != nil, "a bar: both hooks")
	v := NewRun(&buf, RunConfig{Mode: Off, Verbose: true})
	require.NotNil(t, v)
	onSample, onStep = v.Hooks()
	assert.True(t, onSample != nil && onStep == nil, "no bar: no Progress, whose bar it would move")
}

// Verbose writes a line per flagged reply and per error, with held
// secrets redacted, and none for a valid or a cancelled sample.
func TestRunVerboseLinesRedactSecrets(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	sec := &observe.Secrets{}
	sec.Add("sk-hidden-key-123")
	r := NewRun(&buf, RunConfig{Mode: Off, Verbose: true, Secrets: sec})
	require.NotNil(t, r)
	r.Sample(maker.SampleEvent{Step: 0, Flag: maker.ErrFormat, Text: "the key is sk-hidden-key-123, no JSON"})
	r.Sample(maker.SampleEvent{Step: 0, Err: errors.New("server said 500")})
	r.Sample(maker.SampleEvent{Step: 0})
	r.Sample(maker.SampleEvent{Step: 0, Err: context.Canceled})
	out := buf.String()
	assert.Equal(t, 2, strings.Count(out, "maker: "), out)
	assert.NotContains(t, out, "sk-hidden-key-123")
	assert.Contains(t, out, "server said 500")
}

// The bar's text carries the step being decided and the cost forecast;
// concurrent samples and steps are safe (go test -race).
func TestRunBarShowsStepAndCost(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	r := NewRun(&buf, RunConfig{Mode: On, Total: 4, Cost: func(rep *maker.Report) float64 { return 0.5 * float64(rep.Steps) }})
	require.NotNil(t, r)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { r.Sample(maker.SampleEvent{Step: 1, Flag: map[bool]error{true: maker.ErrFormat}[i%2 == 0]}) })
	}
	wg.Wait()
	r.Progress(maker.Event{Step: 1, Report: &maker.Report{Steps: 2}})
	r.Sample(maker.SampleEvent{Step: 2})
	st := r.bar.State() // the text drawn, past the bar's throttle
	assert.Equal(t, int64(2), st.CurrentNum)
	assert.Equal(t, "step 3: 1 sample, 1 valid; $1.0000 of ~$2.0000", st.Description)
	r.Finish()
	assert.NotEmpty(t, buf.String())
}

// Batch draws nothing off a terminal, and its bar shows the tasks' steps
// and cost when on.
func TestBatchBar(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	set, finish := Batch(&buf, Auto, 2)
	assert.Nil(t, set)
	finish()
	assert.Empty(t, buf.String())
	set, finish = Batch(&buf, On, 2)
	require.NotNil(t, set)
	set(batch.Progress{Done: 2, Steps: 40, Samples: 130, Cost: 0.25})
	finish()
	assert.Contains(t, buf.String(), "steps 40, samples 130")
	assert.Contains(t, buf.String(), "$0.2500")
}

// Rounds starts a bar per round and draws nothing when off.
func TestRounds(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	off := NewRounds(&buf, Off)
	off.Start(10)
	off.Set(5, 10)
	off.Finish()
	assert.Empty(t, buf.String())
	on := NewRounds(&buf, On)
	on.Start(10)
	on.Set(5, 10)
	first := on.bar
	on.Start(20) // a new round ends the last one's bar
	assert.True(t, first.IsFinished(), "the first round's bar is finished")
	on.Set(7, 20)
	st := on.bar.State()
	assert.Equal(t, int64(20), st.Max)
	assert.Equal(t, int64(7), st.CurrentNum)
	on.Finish()
	assert.Nil(t, on.bar)
	on.Finish()
	assert.NotEmpty(t, buf.String())
}

// Suites writes a line per finished row where no bar is drawn, nothing
// when off.
func TestSuitesLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	set, finish := Suites(&buf, Off)
	assert.Nil(t, set)
	finish()
	set, finish = Suites(&buf, Auto)
	set("scaling", 0, 3)
	set("scaling", 1, 3)
	finish()
	assert.Contains(t, buf.String(), "bench: scaling: 3 rows\n")
	assert.Contains(t, buf.String(), "bench: scaling: 1/3 rows, ")
	buf.Reset()
	set, finish = Suites(&buf, On)
	set("scaling", 0, 3)
	set("scaling", 3, 3)
	finish()
	assert.NotContains(t, buf.String(), "bench: scaling", "a bar, not lines")
}

// syncBuffer is a bytes.Buffer safe for the bar's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
