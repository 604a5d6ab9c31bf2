package maker

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typedNext is a counter's answer as a typed value: {"next": n}.
type typedNext int

// typedCounter is a counter whose replayed winners its TypedWinner turns
// into typedNext (or fails to, as mode says); Apply takes both forms and
// records which it got.
type typedCounter struct {
	counter
	mode    string // "convert", "error" or "panic"
	applied []any  // the Values Apply got
	events  []any  // the Values Progress saw
}

func (c *typedCounter) TypedWinner(w intent.Output) (intent.Output, error) {
	switch c.mode {
	case "error":
		return intent.Output{}, errors.New("no typed form")
	case "panic":
		panic("typed winner")
	}
	m := w.Value.(map[string]any)
	n, err := m["next"].(json.Number).Int64()
	return intent.Output{Value: typedNext(n)}, err
}

func (c *typedCounter) Apply(w intent.Output, obs *intent.Observation) (bool, error) {
	c.applied = append(c.applied, w.Value)
	if n, ok := w.Value.(typedNext); ok {
		w.Value = map[string]any{"next": json.Number(strconv.Itoa(int(n)))}
	}
	return c.counter.Apply(w, obs)
}

// TestReplayedWinnersAreTyped: a resumed run gives each replayed winner
// to the task's TypedWinner, and its result, not the decoded JSON, goes
// to Apply and to Progress; a TypedWinner that fails or panics leaves the
// decoded winner, and the run resumes as without one.
func TestReplayedWinnersAreTyped(t *testing.T) {
	for _, mode := range []string{"convert", "error", "panic"} {
		store := &statetest.MemStore{}
		j, err := journal.New(store)
		require.NoError(t, err)
		first := &typedCounter{counter: counter{target: 6}, mode: mode}
		s := &Solver{Config: Config{Vote: vote.Config{K: 2}, MaxSteps: 4}, Model: &scripted{reply: noisy}, Journal: j}
		_, err = s.Solve(context.Background(), first)
		require.ErrorIs(t, err, ErrStepLimit)

		j, err = journal.New(store)
		require.NoError(t, err)
		task := &typedCounter{counter: counter{target: 6}, mode: mode}
		s = &Solver{
			Config:  Config{Vote: vote.Config{K: 2}},
			Model:   &scripted{reply: noisy},
			Journal: j,
			Progress: func(e Event) {
				task.events = append(task.events, e.Record.Winner.Value)
			},
		}
		rep, err := s.Solve(context.Background(), task)
		require.NoError(t, err, mode)
		assert.True(t, rep.Done)
		assert.Equal(t, 4, rep.Resumed)
		assert.Equal(t, 6, task.n)
		require.Len(t, task.applied, 6)
		require.Len(t, task.events, 6)
		for i, v := range task.applied[:4] {
			if mode == "convert" {
				assert.Equal(t, typedNext(i+1), v, "%s: replayed step %d", mode, i)
			} else {
				assert.Equal(t, map[string]any{"next": json.Number(strconv.Itoa(i + 1))}, v, "%s: replayed step %d", mode, i)
			}
			assert.Equal(t, v, task.events[i], "Progress sees what Apply got")
		}
	}
}
