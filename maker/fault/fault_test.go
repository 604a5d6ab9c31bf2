package fault_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/fault"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func simModel(t *testing.T, seed uint64) *sim.Model {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed = seed
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	return m
}

// winners reads each step's winner from a journal.
func winners(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Step    *int            `json:"step"`
			Pending bool            `json:"pending"`
			Winner  json.RawMessage `json:"winner"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Step != nil && !r.Pending {
			out = append(out, string(r.Winner))
		}
	}
	return out
}

func solve(t *testing.T, model llms.Model, path string, cfg vote.Config, resume bool) (maker.Report, *hanoi.Task, error) {
	return solveWithin(t, model, path, cfg, resume, 100*time.Millisecond)
}

// solveWithin solves 10-disk Hanoi with a per-call timeout.
func solveWithin(t *testing.T, model llms.Model, path string, cfg vote.Config, resume bool, timeout time.Duration) (maker.Report, *hanoi.Task, error) {
	t.Helper()
	task, err := hanoi.New(10)
	require.NoError(t, err)
	var j *maker.Journal
	if resume {
		j, err = maker.OpenJournal(path)
	} else {
		j, err = maker.CreateJournal(path)
	}
	require.NoError(t, err)
	defer j.Close()
	s := &maker.Solver{Model: model, Vote: cfg, Journal: j, Timeout: timeout}
	rep, err := s.Solve(context.Background(), task)
	return rep, task, err
}

// thirty is a 30% mix of every fault, with short delays.
var thirty = fault.Config{
	Seed: 7, Error: 0.06, RateLimit: 0.04, RetryAfter: time.Millisecond,
	Timeout: 0.04, TimeoutAfter: time.Millisecond, Hang: 0.03, Garbage: 0.05, Cut: 0.04,
	Slow: 0.04, SlowBy: time.Millisecond,
}

func TestThirtyPercentFaultsSameWinners(t *testing.T) {
	dir := t.TempDir()
	cfg := vote.Config{K: 3, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	_, clean, err := solve(t, simModel(t, 1), filepath.Join(dir, "clean.jsonl"), cfg, false)
	require.NoError(t, err)
	require.True(t, clean.Solved())

	faulty, err := fault.Wrap(simModel(t, 1), thirty)
	require.NoError(t, err)
	start := time.Now()
	rep, task, err := solve(t, faulty, filepath.Join(dir, "faulty.jsonl"), cfg, false)
	require.NoError(t, err)
	assert.True(t, task.Solved())
	assert.Zero(t, task.WrongSteps())
	assert.Equal(t, winners(t, filepath.Join(dir, "clean.jsonl")), winners(t, filepath.Join(dir, "faulty.jsonl")), "the same winners as a fault-free run")
	for _, k := range []fault.Kind{fault.KindError, fault.KindRateLimit, fault.KindTimeout, fault.KindHang, fault.KindGarbage, fault.KindCut, fault.KindSlow} {
		assert.Positive(t, faulty.Count(k), "fault %s was injected", k)
	}
	assert.Positive(t, rep.Errors, "provider faults count as errors")
	assert.Positive(t, rep.Flags["cut off"], "a reply cut at the limit is a red flag")
	assert.Positive(t, rep.Flags["unparseable"], "garbage is a red flag")
	injected := faulty.Count(fault.KindError) + faulty.Count(fault.KindRateLimit) + faulty.Count(fault.KindTimeout) + faulty.Count(fault.KindHang)
	assert.LessOrEqual(t, int64(rep.Errors), injected, "only injected faults fail")
	// Each hang is cut by the 100 ms timeout: a hung call never holds a
	// step. The bound is loose (a shared machine) but finite.
	assert.Less(t, time.Since(start), 2*time.Minute)
	t.Logf("1023 steps, %d samples, %d errors, flags %v, %d hangs cut, in %s", rep.Launched, rep.Errors, rep.Flags, faulty.Count(fault.KindHang), time.Since(start).Round(time.Millisecond))
}

// outage fails every call while down is true.
type outage struct {
	llms.Model
	down func() bool
}

// Identity is the wrapped model's: an outage changes no answer.
func (o outage) Identity() string { return maker.ModelIdentity(o.Model) }

func (o outage) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if o.down() {
		return nil, errors.New("connection refused")
	}
	return o.Model.GenerateContent(ctx, msgs, opts...)
}

func TestProviderDownThenBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.jsonl")
	cfg := vote.Config{K: 3, Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}
	var calls atomic.Int64
	down := outage{Model: simModel(t, 2), down: func() bool { return calls.Add(1) > 600 }}
	start := time.Now()
	rep, _, err := solveWithin(t, down, path, vote.Config{K: 3, Parallel: 1, Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}, false, time.Minute)
	require.ErrorIs(t, err, vote.ErrTooManyErrors, "an outage ends the run after a bounded number of failures")
	assert.Less(t, time.Since(start), 30*time.Second)
	var undecided *vote.UndecidedError
	require.ErrorAs(t, err, &undecided)
	assert.Equal(t, vote.DefaultMaxErrors+1, undecided.Tally.Errors, "the error budget, then stop")
	decided := rep.Steps
	require.Positive(t, decided)

	// The provider is back: the run resumes and ends as an uninterrupted
	// run with the same seed, each step once.
	rep, task, err := solveWithin(t, simModel(t, 2), path, cfg, true, time.Minute)
	require.NoError(t, err)
	assert.True(t, task.Solved())
	assert.Equal(t, decided, rep.Resumed)
	_, clean, err := solveWithin(t, simModel(t, 2), filepath.Join(dir, "clean.jsonl"), cfg, false, time.Minute)
	require.NoError(t, err)
	require.True(t, clean.Solved())
	assert.Equal(t, winners(t, filepath.Join(dir, "clean.jsonl")), winners(t, path), "no step lost or decided twice")
}

func TestFaultsAreReproducible(t *testing.T) {
	a, err := fault.Wrap(simModel(t, 3), thirty)
	require.NoError(t, err)
	b, err := fault.Wrap(simModel(t, 3), thirty)
	require.NoError(t, err)
	for i := range 200 {
		// Each call has its own deadline, long enough that only a hang
		// meets it, even on a loaded machine.
		call := func(m *fault.Model) (*llms.ContentResponse, error) {
			ctx, cancel := context.WithTimeout(maker.WithSampleID(context.Background(), maker.SampleID{Step: i / 5, Index: i % 5}), 100*time.Millisecond)
			defer cancel()
			return m.GenerateContent(ctx, hanoi.Messages(3, hanoi.Start(3), nil))
		}
		ra, ea := call(a)
		rb, eb := call(b)
		assert.Equal(t, ea == nil, eb == nil, "call %d", i)
		if ea == nil {
			assert.Equal(t, ra.Choices[0].Content, rb.Choices[0].Content, "call %d", i)
		}
	}
	_, err = fault.Wrap(simModel(t, 3), fault.Config{Error: 0.6, Hang: 0.6})
	assert.ErrorIs(t, err, fault.ErrConfig)
	_, err = fault.Wrap(simModel(t, 3), fault.Config{Garbage: -0.1})
	assert.ErrorIs(t, err, fault.ErrConfig)
}

func TestRateLimitCarriesTheDelay(t *testing.T) {
	m, err := fault.Wrap(simModel(t, 4), fault.Config{RateLimit: 1, RetryAfter: 3 * time.Second})
	require.NoError(t, err)
	_, err = m.GenerateContent(context.Background(), hanoi.Messages(3, hanoi.Start(3), nil))
	require.True(t, llms.IsRateLimitError(err))
	assert.ErrorIs(t, err, fault.ErrInjected)
	d, ok := maker.RetryAfter(err)
	require.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
}
