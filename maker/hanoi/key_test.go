package hanoi_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
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
// Output and a key equal to intent.Key's, and two replies have the same
// typed key exactly when they have the same canonical key.
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
			require.Equal(t, want, out)
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

// plainTask hides Task's DecodeKey: the solver then keys with intent.Key.
type plainTask struct{ maker.Task }

// TestTypedKeysChangeNoRecord: a run with typed keys (and Apply taking
// the answers DecodeKey parsed) journals exactly the steps (winners,
// keys, votes, counts) of the same run keyed canonically; also with
// contested steps (p = 0.7, some decided wrong), where a step's samples
// hold several distinct answers.
func TestTypedKeysChangeNoRecord(t *testing.T) {
	run := func(wrap bool, cfg sim.Config, k int) ([]maker.StepRecord, *hanoi.Task) {
		m, err := sim.New(hanoi.Oracle{}, cfg)
		require.NoError(t, err)
		task, _ := hanoi.New(6)
		var tk maker.Task = task
		if wrap {
			tk = plainTask{task}
		}
		var recs []maker.StepRecord
		s := &maker.Solver{Model: m, Vote: vote.Config{K: k}, Progress: func(e maker.Event) {
			r := *e.Record
			r.Usage.Latency, r.Elapsed = 0, 0
			recs = append(recs, r)
		}}
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
