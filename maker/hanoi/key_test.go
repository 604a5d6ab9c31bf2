package hanoi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everyAnswer lists every well-formed answer with n disks: each state
// (each disk on one of three pegs) with each of the n*6 moves.
func everyAnswer(n int) []hanoi.Answer {
	var out []hanoi.Answer
	pegOf := make([]int, n+1)
	var rec func(d int)
	rec = func(d int) {
		if d == 0 {
			s := hanoi.State{{}, {}, {}}
			for disk := n; disk >= 1; disk-- {
				s[pegOf[disk]] = append(s[pegOf[disk]], disk)
			}
			for disk := 1; disk <= n; disk++ {
				for from := range 3 {
					for to := range 3 {
						if from != to {
							out = append(out, hanoi.Answer{Move: hanoi.Move{Disk: disk, From: from, To: to}, Next: s.Clone()})
						}
					}
				}
			}
			return
		}
		for p := range 3 {
			pegOf[d] = p
			rec(d - 1)
		}
	}
	rec(n)
	return out
}

// TestAnswerKeyIsIntentKey: over every well-formed answer of 1 to 4 disks
// (and ones of 10 and MaxDisks), Answer.Key is intent.Key of its Value,
// so typed keys are equal exactly when canonical keys are; and distinct
// answers have distinct keys.
func TestAnswerKeyIsIntentKey(t *testing.T) {
	seen := map[uint64]hanoi.Answer{}
	answers := []hanoi.Answer{}
	for n := 1; n <= 4; n++ {
		answers = append(answers, everyAnswer(n)...)
	}
	big, _ := hanoi.New(hanoi.MaxDisks)
	ten, _ := hanoi.New(10)
	answers = append(answers,
		hanoi.Answer{Move: hanoi.Move{Disk: 1, From: 0, To: 2}, Next: ten.State()},
		hanoi.Answer{Move: hanoi.Move{Disk: hanoi.MaxDisks, From: 2, To: 1}, Next: big.State()})
	for _, a := range answers {
		want, err := intent.Key(intent.Output{Value: a.Value()})
		require.NoError(t, err)
		require.Equal(t, want, a.Key(), "%s", a.Text())
		if b, ok := seen[a.Key()]; ok {
			require.Equal(t, b, a, "two answers share a key")
		}
		seen[a.Key()] = a
	}
	assert.Len(t, seen, len(answers))
}

// FuzzAnswerKey: whatever a reply parses to, DecodeKey gives Decode's
// error, or Decode's answer as a typed Answer Value (the one Parse
// reads) that marshals, keys and canonicalises exactly as Decode's map,
// that TypedWinner gives back from its journaled JSON, and a key equal
// to intent.Key's; and two replies have the same typed key exactly when
// they have the same canonical key.
func FuzzAnswerKey(f *testing.F) {
	for _, s := range []string{
		"move = [1, 0, 2]\nnext_state = [[3, 2], [], [1]]",
		`{"move": [1, 0, 2], "next_state": [[3, 2], [], [1]]}`,
		"move = [1.0, 0, 2e0]\nnext_state = [[3, 2], [], [1]]",
		"next_state = [[3], [2], [1]]\nmove = [2, 0, 1]",
		"move = [2, 0, 1]\nnext_state = [[3], [2], [1]]",
		"",
	} {
		f.Add(s, "move = [1, 0, 2]\nnext_state = [[3, 2], [], [1]]")
	}
	task, _ := hanoi.New(3)
	f.Fuzz(func(t *testing.T, text, other string) {
		var keys [2]uint64
		var canon [2]uint64
		var ok [2]bool
		for i, s := range []string{text, other} {
			r := maker.Reply{Text: s}
			want, wantErr := task.Decode(r)
			out, key, err := task.DecodeKey(r)
			if wantErr != nil {
				require.EqualError(t, err, wantErr.Error())
				continue
			}
			require.NoError(t, err)
			a, err := task.Parse(s)
			require.NoError(t, err)
			require.Equal(t, intent.Output{Value: a}, out, "the typed answer Parse reads")
			checkSameAnswer(t, want, out)
			// Journaled and read back (json.Number numbers, as the solver
			// replays), TypedWinner gives the typed Output again.
			raw, err := json.Marshal(out)
			require.NoError(t, err)
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.UseNumber()
			var replayed intent.Output
			require.NoError(t, dec.Decode(&replayed))
			back, err := task.TypedWinner(replayed)
			require.NoError(t, err)
			require.Equal(t, out, back, "TypedWinner of the journaled winner")
			ck, err := intent.Key(want)
			require.NoError(t, err)
			require.Equal(t, ck, key, "%q", s)
			keys[i], canon[i], ok[i] = key, ck, true
		}
		if ok[0] && ok[1] {
			assert.Equal(t, canon[0] == canon[1], keys[0] == keys[1])
		}
	})
}

// checkSameAnswer asserts that typed means what want does: the same
// json.Marshal bytes (the journal's), intent.Key, intent.Canonical and
// DecodeValue result.
func checkSameAnswer(t *testing.T, want, typed intent.Output) {
	t.Helper()
	wb, err := json.Marshal(want)
	require.NoError(t, err)
	tb, err := json.Marshal(typed)
	require.NoError(t, err)
	require.Equal(t, string(wb), string(tb), "the JSON of the typed Output")
	wk, err := intent.Key(want)
	require.NoError(t, err)
	tk, err := intent.Key(typed)
	require.NoError(t, err)
	require.Equal(t, wk, tk, "intent.Key")
	wc, err := intent.Canonical(want)
	require.NoError(t, err)
	tc, err := intent.Canonical(typed)
	require.NoError(t, err)
	require.Equal(t, string(wc), string(tc), "intent.Canonical")
	var wv, tv any
	require.NoError(t, want.DecodeValue(&wv))
	require.NoError(t, typed.DecodeValue(&tv))
	require.Equal(t, wv, tv, "DecodeValue")
}

// TestAnswerValueIsItsMap: over every well-formed answer of 1 to 4 disks,
// ones of 10 and MaxDisks, and hand-built ones that are not well formed
// (negative and large numbers, nil pegs), an Answer as a Value marshals,
// keys, canonicalises and decodes exactly as its Value map; and MarshalJSON
// writes the canonical text itself.
func TestAnswerValueIsItsMap(t *testing.T) {
	answers := []hanoi.Answer{}
	for n := 1; n <= 4; n++ {
		answers = append(answers, everyAnswer(n)...)
	}
	big, _ := hanoi.New(hanoi.MaxDisks)
	answers = append(answers,
		hanoi.Answer{Move: hanoi.Move{Disk: hanoi.MaxDisks, From: 2, To: 1}, Next: big.State()},
		hanoi.Answer{Move: hanoi.Move{Disk: -1, From: 10, To: 99}, Next: hanoi.State{nil, {100, -100, 7}, {}}},
		hanoi.Answer{Move: hanoi.Move{Disk: 1 << 40, From: -9, To: 0}},
		hanoi.Answer{})
	for _, a := range answers {
		checkSameAnswer(t, intent.Output{Value: a.Value()}, intent.Output{Value: a})
		b, err := a.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, "x"+string(b), string(a.AppendJSON([]byte("x"))), "AppendJSON appends MarshalJSON's bytes")
		c, err := intent.Canonical(intent.Output{Value: a.Value()})
		require.NoError(t, err)
		require.Equal(t, string(c), string(b))
	}
}

// plainTask hides Task's DecodeKey: the solver then keys with intent.Key.
type plainTask struct{ maker.Task }

// TaskVersion is the wrapped task's: the same rules, so its journal
// resumes with the task itself.
func (p plainTask) TaskVersion() string { return p.Task.(maker.TaskVersioner).TaskVersion() }

// TestTypedKeysChangeNoRecord: a run with typed keys and typed winners
// (Apply taking the Answers DecodeKey parsed) journals exactly the steps
// (the JSON of winners, keys, votes, counts) of the same run keyed
// canonically with map winners; also with contested steps (p = 0.7, some
// decided wrong), where a step's samples hold several distinct answers.
func TestTypedKeysChangeNoRecord(t *testing.T) {
	run := func(wrap bool, cfg sim.Config, k int) ([]string, *hanoi.Task) {
		m, err := sim.New(hanoi.Oracle{}, cfg)
		require.NoError(t, err)
		task, _ := hanoi.New(6)
		var tk maker.Task = task
		if wrap {
			tk = plainTask{task}
		}
		var recs []string
		s := &maker.Solver{
			Config: maker.Config{Vote: vote.Config{K: k}},
			Model:  m,
			Progress: func(e maker.Event) {
				r := *e.Record
				r.Usage.Latency, r.Elapsed = 0, 0
				r.Samples = slices.Clone(r.Samples)
				for i := range r.Samples {
					r.Samples[i].Latency = 0
				}
				_, typed := r.Winner.Value.(hanoi.Answer)
				require.Equal(t, !wrap, typed, "the winner is typed exactly with DecodeKey")
				b, err := json.Marshal(r)
				require.NoError(t, err)
				recs = append(recs, string(b))
			},
		}
		_, err = s.Solve(context.Background(), tk)
		require.NoError(t, err)
		return recs, task
	}
	typed, task := run(false, sim.DefaultConfig(), 3)
	plain, _ := run(true, sim.DefaultConfig(), 3)
	require.Len(t, typed, 63)
	assert.True(t, task.Solved())
	assert.Equal(t, plain, typed)

	hard := sim.DefaultConfig()
	hard.P, hard.Seed = 0.7, 11
	typed, task = run(false, hard, 2)
	plain, other := run(true, hard, 2)
	require.Len(t, typed, 63)
	assert.Positive(t, task.WrongSteps(), "some steps decided wrong")
	assert.Equal(t, other.State(), task.State())
	assert.Equal(t, plain, typed)
}

// TestTypedWinnersJournalTheSameLines: the journal of a run with typed
// winners holds, step for step, the lines of the same run with map
// winners (the times they took, and so the chain of hashes, aside); and
// either journal resumes to the same finished task.
func TestTypedWinnersJournalTheSameLines(t *testing.T) {
	dir := t.TempDir()
	times := regexp.MustCompile(`"(elapsed_ns|latency_ns|wall_ns|ns)":[0-9]+|,"chain":"[0-9a-f]+"`)
	run := func(wrap bool, cfg sim.Config, k int, name string) []string {
		m, err := sim.New(hanoi.Oracle{}, cfg)
		require.NoError(t, err)
		task, _ := hanoi.New(5)
		var tk maker.Task = task
		if wrap {
			tk = plainTask{task}
		}
		path := filepath.Join(dir, name)
		j, err := journalfile.Create(path)
		require.NoError(t, err)
		s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: k}, MaxSteps: 20}, Model: m, Journal: j}
		_, err = s.Solve(context.Background(), tk)
		require.ErrorIs(t, err, maker.ErrStepLimit)
		require.NoError(t, j.Close())
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var steps []string
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, `{"step":`) {
				steps = append(steps, times.ReplaceAllString(line, ""))
			}
		}
		require.Len(t, steps, 20)

		// Resumed with the typed task, the run finishes as one that
		// never stopped.
		j, err = journalfile.Open(path)
		require.NoError(t, err)
		resumed, _ := hanoi.New(5)
		s.Journal, s.MaxSteps = j, 0
		_, err = s.Solve(context.Background(), resumed)
		require.NoError(t, err)
		require.NoError(t, j.Close())
		assert.Equal(t, 31, resumed.Steps())
		assert.Equal(t, cfg.P == 1 || resumed.WrongSteps() == 0, resumed.Solved())
		return steps
	}
	cfg := sim.DefaultConfig()
	assert.Equal(t, run(true, cfg, 3, "plain.jsonl"), run(false, cfg, 3, "typed.jsonl"))
	hard := sim.DefaultConfig()
	hard.P, hard.Seed = 0.7, 11
	assert.Equal(t, run(true, hard, 2, "plain-hard.jsonl"), run(false, hard, 2, "typed-hard.jsonl"))
}

// TestTypedWinnerRefusesWhatApplyRefuses: a winner with a tool intent or
// a Value that is not an answer of the task's disks is left as it was,
// with Apply's error.
func TestTypedWinnerRefusesWhatApplyRefuses(t *testing.T) {
	task, _ := hanoi.New(3)
	ti := intent.Output{Intent: &intent.ToolIntent{Tool: "read_file"}}
	got, err := task.TypedWinner(ti)
	require.ErrorIs(t, err, hanoi.ErrFormat)
	assert.Equal(t, ti, got)
	bad := intent.Output{Value: map[string]any{"move": []any{json.Number("4"), json.Number("0"), json.Number("2")}, "next_state": []any{[]any{}, []any{}, []any{}}}}
	got, err = task.TypedWinner(bad)
	require.ErrorIs(t, err, hanoi.ErrFormat)
	assert.Equal(t, bad, got)
}

// TestResumedRunReportsTypedWinners: a run resumed from a file journal
// reports to Progress, for its replayed and its new steps, the winners an
// uninterrupted run reports (typed Answers, reflect.DeepEqual).
func TestResumedRunReportsTypedWinners(t *testing.T) {
	winners := func(j *journal.Journal, maxSteps int, task *hanoi.Task) []any {
		var out []any
		m, err := sim.New(hanoi.Oracle{}, sim.DefaultConfig())
		require.NoError(t, err)
		s := &maker.Solver{
			Config:  maker.Config{Vote: vote.Config{K: 3}, MaxSteps: maxSteps},
			Model:   m,
			Journal: j,
			Progress: func(e maker.Event) {
				out = append(out, e.Record.Winner.Value)
			},
		}
		_, _ = s.Solve(context.Background(), task)
		return out
	}
	task, _ := hanoi.New(5)
	want := winners(nil, 0, task)
	require.Len(t, want, 31)
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	task, _ = hanoi.New(5)
	require.Len(t, winners(j, 12, task), 12)
	require.NoError(t, j.Close())
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	task, _ = hanoi.New(5)
	got := winners(j, 0, task)
	require.NoError(t, j.Close())
	assert.True(t, task.Solved())
	assert.Equal(t, want, got)
	_, typed := got[0].(hanoi.Answer)
	assert.True(t, typed, "a replayed winner is an Answer")
}
