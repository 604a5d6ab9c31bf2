package maker

import (
	"sync"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
)

// modelTally records each sample of a step by index, to share the step
// out among an ensemble's members.
type modelTally struct {
	n  int
	mu sync.Mutex
	by []vote.Sample[intent.Output] // Value unset
	ok []bool
}

// reset empties the tally for a step of n members' samples, keeping its
// room.
func (t *modelTally) reset(n int) {
	t.mu.Lock()
	t.n, t.by, t.ok = n, t.by[:0], t.ok[:0]
	t.mu.Unlock()
}

func (t *modelTally) record(i int, s vote.Sample[intent.Output]) {
	if t.n < 2 {
		return
	}
	s.Value = intent.Output{}
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.by) <= i {
		t.by = append(t.by, vote.Sample[intent.Output]{})
		t.ok = append(t.ok, false)
	}
	t.by[i], t.ok[i] = s, true
}

// shares splits the samples among the members: the first committed
// samples (by index) count as valid, flagged or failed, the rest as
// cancelled; winner votes are valid votes for key.
func (t *modelTally) shares(committed int, key uint64) []ModelStep {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]ModelStep, t.n)
	for i, s := range t.by {
		m := &out[i%t.n]
		m.Launched++
		m.Usage.Add(s.Usage)
		switch {
		case i >= committed || !t.ok[i]:
			m.Cancelled++
		case s.Err != nil:
			m.Errors++
		case s.Flag != nil:
			m.Flagged++
		default:
			m.Valid++
			if s.Key == key {
				m.WinnerVotes++
			}
		}
	}
	return out
}
