package maker

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// syncScripted is scripted, declared Synchronous (or not), counting the
// calls in flight at once.
type syncScripted struct {
	scripted
	sync           bool
	inflight, peak atomic.Int64
	mu             sync.Mutex
	goroutines     map[string]bool // the goroutines that called
}

// goroutine names the calling goroutine ("goroutine 7").
func goroutine() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(string(buf), " [")
	return id
}

func (m *syncScripted) Synchronous() bool { return m.sync }

func (m *syncScripted) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	m.mu.Lock()
	if m.goroutines == nil {
		m.goroutines = map[string]bool{}
	}
	m.goroutines[goroutine()] = true
	m.mu.Unlock()
	n := m.inflight.Add(1)
	defer m.inflight.Add(-1)
	for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
	}
	return m.scripted.GenerateContent(ctx, msgs, opts...)
}

// TestSynchronousModelDrawsInlineSameRun: a Synchronous model's samples are
// drawn one at a time, and the run (every journaled step's winner, key,
// votes, counts and flags) is the one the same model makes drawn in
// parallel.
func TestSynchronousModelDrawsInlineSameRun(t *testing.T) {
	dir := t.TempDir()
	run := func(sync bool, parallel int) (*syncScripted, Report, []*StepRecord) {
		m := &syncScripted{scripted: scripted{reply: noisy}, sync: sync}
		path := filepath.Join(dir, "j.jsonl")
		j, err := CreateJournal(path)
		require.NoError(t, err)
		var recs []*StepRecord
		s := &Solver{Model: m, Vote: vote.Config{K: 2, Parallel: parallel}, Journal: j, Progress: func(e Event) {
			rec := *e.Record
			rec.Usage.Latency, rec.Elapsed = 0, 0
			recs = append(recs, &rec)
		}}
		task := &counter{target: 30}
		rep, err := s.Solve(context.Background(), task)
		require.NoError(t, err)
		require.NoError(t, j.Close())
		require.NoError(t, os.Remove(path))
		assert.Zero(t, task.wrong)
		return m, rep, recs
	}
	threaded, repT, recsT := run(false, 3)
	inline, repI, recsI := run(true, 3)
	seq, _, recsS := run(false, 1)
	me := map[string]bool{goroutine(): true}
	assert.Equal(t, me, inline.goroutines, "a synchronous model is drawn on the solver's goroutine")
	assert.Equal(t, int64(1), inline.peak.Load())
	assert.Equal(t, me, seq.goroutines, "one sample at a time: drawn on the solver's goroutine")
	assert.NotContains(t, threaded.goroutines, goroutine(), "the other model is drawn on workers")
	assert.Equal(t, recsT, recsI)
	assert.Equal(t, recsT, recsS)
	assert.Equal(t, repT.Counts, repI.Counts)
	assert.Equal(t, repT.Flags, repI.Flags)
}

func TestEnsembleSynchronousWhenEveryMemberIs(t *testing.T) {
	a, b := &syncScripted{sync: true}, &syncScripted{sync: true}
	e, err := NewEnsemble(a, b)
	require.NoError(t, err)
	assert.True(t, e.Synchronous())
	b.sync = false
	assert.False(t, e.Synchronous())
	e, err = NewEnsemble(a, &scripted{})
	require.NoError(t, err)
	assert.False(t, e.Synchronous(), "a member that does not say is not synchronous")
}

// TestSynchronousModelBatchedKeepsWaves: with several samples per request,
// a synchronous model's waves are still launched together (on workers),
// so each wave can be one request.
func TestSynchronousModelBatchedKeepsWaves(t *testing.T) {
	m := &syncScripted{scripted: scripted{reply: noisy}, sync: true}
	s := &Solver{Model: m, Vote: vote.Config{K: 2, Parallel: 2}, SamplesPerCall: 4}
	_, err := s.Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)
	assert.NotContains(t, m.goroutines, goroutine(), "batched waves are drawn by Race's workers")
	inline := &syncScripted{scripted: scripted{reply: noisy}, sync: true}
	s = &Solver{Model: inline, Vote: vote.Config{K: 2, Parallel: 2}}
	_, err = s.Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{goroutine(): true}, inline.goroutines)
}
