package maker

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"

	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
)

// TestSolverKeyNormalizesIntents: Solver.Key normalizes a tool intent with
// the Executor before hashing it, as Solve does with every sample, so two
// spellings the Executor heals to one intent get one key; without an
// Executor, or for a value, it is intent.Key (draw.go:97, both conditions
// of the normalizer's guard; draw.go:108, the nil Executor's normalizer).
func TestSolverKeyNormalizesIntents(t *testing.T) {
	ex, err := fstools.New("../testdata/spec/repo")
	require.NoError(t, err)
	defer ex.Close()
	grep := func(paths any) intent.Output {
		return intent.Output{Intent: &intent.ToolIntent{Tool: "grep", Args: map[string]any{"pattern": "Version", "paths": paths}}}
	}
	list, text := grep([]any{"src"}), grep(`["src"]`)
	s := &Solver{Executor: ex}
	kl, err := s.Key(list)
	require.NoError(t, err)
	kt, err := s.Key(text)
	require.NoError(t, err)
	assert.Equal(t, kl, kt, "a list and the same list as a JSON string get one key")
	raw, err := intent.Key(text)
	require.NoError(t, err)
	assert.NotEqual(t, raw, kt, "the key is the normalized intent's, not the raw one's")

	value := intent.Output{Value: map[string]any{"next": 3}}
	want, err := intent.Key(value)
	require.NoError(t, err)
	for _, s := range []*Solver{{Executor: ex}, {}} {
		got, err := s.Key(value)
		require.NoError(t, err)
		assert.Equal(t, want, got, "a value's key is intent.Key's")
	}
	got, err := (&Solver{}).Key(text)
	require.NoError(t, err)
	assert.Equal(t, raw, got, "without an Executor an intent is not normalized")
}

// TestJournalKeyOfExactlyTheMinimum: a chain key (journal.KeyEnv) of
// journal.MinKey bytes is accepted, one byte shorter is refused (chain.go,
// the key's length check).
func TestJournalKeyOfExactlyTheMinimum(t *testing.T) {
	t.Setenv(journal.KeyEnv, strings.Repeat("k", journal.MinKey))
	_, err := journal.New(&statetest.MemStore{})
	require.NoError(t, err)
	t.Setenv(journal.KeyEnv, strings.Repeat("k", journal.MinKey-1))
	_, err = journal.New(&statetest.MemStore{})
	require.ErrorIs(t, err, journal.ErrKey)
}

// TestJournalLineOfExactlyTheMaximum: a line of journal.MaxLine bytes is
// read and judged on what it holds; only a longer one is refused for its
// length (journal.go:287).
func TestJournalLineOfExactlyTheMaximum(t *testing.T) {
	line := bytes.Repeat([]byte("x"), journal.MaxLine)
	_, err := journal.New(&statetest.MemStore{Stored: [][]byte{line}}, journal.Unsigned())
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), "is not a journal")
	assert.NotContains(t, err.Error(), "longer than")

	_, err = journal.New(&statetest.MemStore{Stored: [][]byte{append(line, 'x')}}, journal.Unsigned())
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), fmt.Sprintf("is longer than %d bytes", journal.MaxLine))
}

// applyFails is a counter whose Apply fails on its failAt-th call.
type applyFails struct {
	counter
	calls, failAt int
}

func (a *applyFails) Apply(w intent.Output, obs *intent.Observation) (bool, error) {
	if a.calls++; a.calls == a.failAt {
		return false, errors.New("apply refused")
	}
	return a.counter.Apply(w, obs)
}

// TestReplayErrorNamesTheJournalLine: a step that fails when replayed is
// named by its line in the journal file, counted from 1 (journal.go:380,
// the line number records gives).
func TestReplayErrorNamesTheJournalLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	_, err := journalRun(t, path, &counter{target: 6}, 4, nil, false)
	require.ErrorIs(t, err, context.Canceled)
	lines := strings.SplitAfter(string(mustRead(t, path)), "\n")
	line := 0
	for i, l := range lines {
		if strings.HasPrefix(l, `{"step":2,`) {
			line = i + 1
		}
	}
	require.NotZero(t, line, "step 2 is in the journal")
	_, err = journalRun(t, path, &applyFails{counter: counter{target: 6}, failAt: 3}, 0, nil, true)
	require.ErrorIs(t, err, ErrStep)
	assert.Contains(t, err.Error(), fmt.Sprintf("replaying step 2 (%s:%d)", path, line))
}

// TestSettingsMismatchJoinsTheDifferences: a journal refused for other
// settings names every difference, joined by "; " with nothing before the
// first (journal.go:459, joinDiff's separator).
func TestSettingsMismatchJoinsTheDifferences(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	solver := func(maxTokens int, prompt string) *Solver {
		return &Solver{Config: Config{Vote: vote.Config{K: 2}, MaxTokens: maxTokens, Settings: map[string]string{"prompt": prompt}}, Model: &scripted{reply: noisy}}
	}
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	s := solver(750, "v1")
	s.Journal = j
	_, err = s.Solve(context.Background(), &counter{target: 3})
	require.NoError(t, err)
	require.NoError(t, j.Close())

	j, err = journalfile.Open(path)
	require.NoError(t, err)
	defer j.Close()
	s = solver(100, "v2")
	s.Journal = j
	_, err = s.Solve(context.Background(), &counter{target: 3})
	require.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), `was written with other settings (max_tokens: 750 in the journal, 100 now; prompt: "v1" in the journal, "v2" now); resume`)
}

// peekFirstPrompt is a counter that calls peek before its first prompt.
type peekFirstPrompt struct {
	counter
	peek func()
}

func (p *peekFirstPrompt) Prompt(last *intent.Observation) []llms.MessageContent {
	if p.peek != nil {
		p.peek()
		p.peek = nil
	}
	return p.counter.Prompt(last)
}

// TestJournalHeaderWrittenBeforeTheFirstDraw: a new journal's header is in
// the file before the first step is drawn, so a run killed during its
// first step leaves a journal (journal.go:479, begin's write of the header
// then its Flush).
func TestJournalHeaderWrittenBeforeTheFirstDraw(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	defer j.Close()
	var seen []byte
	task := &peekFirstPrompt{counter: counter{target: 2}, peek: func() { seen = mustRead(t, path) }}
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(seen, headerPrefix), "the file before the first draw: %q", seen)
	assert.Equal(t, 1, bytes.Count(seen, []byte("\n")), "the header line alone")
}

// peekSnap is a snapCounter that calls peek with its value before each
// prompt.
type peekSnap struct {
	snapCounter
	peek func(n int)
}

func (p *peekSnap) Prompt(last *intent.Observation) []llms.MessageContent {
	p.peek(p.n)
	return p.snapCounter.Prompt(last)
}

// TestCheckpointWrittenBeforeTheNextStep: a checkpoint is in the file
// before the next step is drawn, whatever the write batching holds back
// (journal.go:532, writeCheckpoint's Flush after its line).
func TestCheckpointWrittenBeforeTheNextStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	defer j.Close()
	j.CheckpointEvery, j.WriteEvery, j.SyncEvery = 2, time.Hour, 1000
	var seen []byte
	task := &peekSnap{snapCounter: snapCounter{counter: counter{target: 4}}, peek: func(n int) {
		if n == 2 {
			seen = mustRead(t, path)
		}
	}}
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Contains(t, string(seen), `{"checkpoint":2`, "the file before step 2 is drawn")
}

// TestUnkeyedChainIsPlainSHA256: without a key the chain is SHA-256, as
// documented: the header's chain field is the SHA-256 of 32 zero bytes
// then the line before the field (journalchain.go:60, an empty key must
// not make an HMAC chain).
func TestUnkeyedChainIsPlainSHA256(t *testing.T) {
	t.Setenv(journal.KeyEnv, "")
	path := filepath.Join(t.TempDir(), "j.jsonl")
	_, err := journalRun(t, path, &counter{target: 1}, 0, nil, false, journal.Unsigned())
	require.NoError(t, err)
	header, _, ok := strings.Cut(string(mustRead(t, path)), "\n")
	require.True(t, ok)
	body, sum, ok := strings.Cut(header, chainField)
	require.True(t, ok, header)
	want := sha256.Sum256(append(make([]byte, sha256.Size), body...))
	assert.Equal(t, hex.EncodeToString(want[:])+`"}`, sum)
}

// TestArgsTextIsJSON: the pending side effect's message shows the call's
// arguments as JSON (replay.go:116, argsText's error check).
func TestArgsTextIsJSON(t *testing.T) {
	assert.Equal(t, `{"path":"a.txt"}`, argsText(map[string]any{"path": "a.txt"}))
	assert.Contains(t, argsText(map[string]any{"bad": func() {}}), "bad:", "not JSON: printed as Go prints it")
}

// failingSnap is a snapCounter whose Snapshot fails.
type failingSnap struct{ snapCounter }

var errSnap = errors.New("no snapshot today")

func (f *failingSnap) Snapshot() (json.RawMessage, error) { return nil, errSnap }

// TestFailedCheckpointEndsTheRun: a checkpoint that cannot be taken ends
// the run with ErrStep, at the step it was due (solver.go:475).
func TestFailedCheckpointEndsTheRun(t *testing.T) {
	j, err := journal.New(&statetest.MemStore{})
	require.NoError(t, err)
	j.CheckpointEvery = 2
	task := &failingSnap{snapCounter{counter: counter{target: 5}}}
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), task)
	require.ErrorIs(t, err, ErrStep)
	require.ErrorIs(t, err, errSnap)
	assert.False(t, rep.Done)
	assert.Equal(t, 2, rep.Steps)
}

// flushFails is a statetest.MemStore whose Flush fails once fail is set.
type flushFails struct {
	statetest.MemStore
	fail bool
}

var errFlush = errors.New("flush refused")

func (f *flushFails) Flush() error {
	if f.fail {
		return errFlush
	}
	return nil
}

// TestFinalFlushErrorIsReturned: a run whose every step succeeded but
// whose journal's last flush failed returns that failure (solver.go:286).
func TestFinalFlushErrorIsReturned(t *testing.T) {
	store := &flushFails{}
	j, err := journal.New(store)
	require.NoError(t, err)
	s := &Solver{
		Config:  Config{Vote: vote.Config{K: 2}},
		Model:   &scripted{reply: noisy},
		Journal: j,
		Progress: func(e Event) {
			store.fail = e.Report.Done
		},
	}
	rep, err := s.Solve(context.Background(), &counter{target: 3})
	assert.True(t, rep.Done)
	require.ErrorIs(t, err, errFlush)
}

// pricedScripted is a scripted model with its own price.
type pricedScripted struct {
	*scripted
	price Price
}

func (p pricedScripted) Price() Price { return p.price }

// counting is a scripted model that answers each step right, except
// that draws whose index is 1 mod 4 fail when flaky.
func counting(flaky bool) *scripted {
	return &scripted{reply: func(id SampleID, prompt string) (string, string) {
		if flaky && id.Index%4 == 1 {
			return "", "error"
		}
		return fmt.Sprintf(`{"next": %d}`, current(prompt)+1), "stop"
	}}
}

// TestEnsembleSharesCountFailedDraws: with two members, one of which
// fails some draws, each step's per-model shares add up to its counts,
// failed draws included (solver.go:410, the committed samples).
func TestEnsembleSharesCountFailedDraws(t *testing.T) {
	ens, err := NewEnsemble(counting(false), counting(true))
	require.NoError(t, err)
	errs := 0
	s := &Solver{
		Config: Config{Vote: vote.Config{K: 3}},
		Model:  ens,
		Progress: func(e Event) {
			var sum vote.Counts
			for _, m := range e.Record.Models {
				sum.Launched += m.Launched
				sum.Valid += m.Valid
				sum.Flagged += m.Flagged
				sum.Errors += m.Errors
				sum.Cancelled += m.Cancelled
			}
			assert.Equal(t, e.Record.Counts, sum, "step %d", e.Step)
			errs += e.Record.Errors
		},
	}
	rep, err := s.Solve(context.Background(), &counter{target: 4})
	require.NoError(t, err)
	require.True(t, rep.Done)
	require.Positive(t, errs, "some draws failed")
}

// TestEnsembleBudgetChargesEachMembersPrice: a Budget is charged each
// member's own price, as the report is costed (solver.go:274, the member
// of a sample).
func TestEnsembleBudgetChargesEachMembersPrice(t *testing.T) {
	ens, err := NewEnsemble(pricedScripted{counting(false), Price{InputPerMillion: 3, OutputPerMillion: 5}},
		pricedScripted{counting(false), Price{InputPerMillion: 7, OutputPerMillion: 11}})
	require.NoError(t, err)
	budget := newCapSpender(0)
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 3}}, Model: ens, Budget: budget}).Solve(context.Background(), &counter{target: 4})
	require.NoError(t, err)
	require.True(t, rep.Done)
	require.Positive(t, rep.Models[1].Cost, "the second member drew samples")
	assert.InDelta(t, rep.Cost, budget.Spent(), 1e-12, "the budget was charged what the report costs")
}

// TestLongTornTailIsCut: a torn last line longer than everything the
// resumed run writes is cut, not overwritten in part (journalfile.go:229).
func TestLongTornTailIsCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	lines := finished(t, path, 100)
	require.Greater(t, len(lines), 5)
	tail := `{"step":3,` + strings.Repeat("x", 1<<16)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:4], "")+tail), 0o644))
	asCrashed(t, path)
	rep, err := journalRun(t, path, &snapCounter{counter: counter{target: 6}}, 0, nil, true)
	require.NoError(t, err)
	require.True(t, rep.Done)
	got := string(mustRead(t, path))
	assert.NotContains(t, got, "xxx")
	assert.True(t, strings.HasSuffix(got, "}\n"))
	j, err := journalfile.Open(path)
	require.NoError(t, err)
	assert.Zero(t, j.TornBytes())
	require.NoError(t, j.Close())
}
