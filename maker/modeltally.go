package maker

import (
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker/journal"
	"strconv"
	"sync"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
)

// modelTally records each sample of a step by index: to share the step
// out among an ensemble's members, and, when keep is set, for the step
// record's samples (journal.StepRecord.Samples).
type modelTally struct {
	n    int
	keep bool // record samples for journal.StepRecord.Samples, whatever n
	// group is a tool-first vote's group of a valid answer (run.toolGroup),
	// kept per sample so a sample of a group that lost shows as the race
	// counted it; nil without ToolFirst.
	group func(intent.Output) uint64
	mu    sync.Mutex
	by    []drawnSample
}

// drawnSample is one sample of a step as its draw returned it, and what
// the races made of it.
type drawnSample struct {
	vote.Sample[intent.Output] // Value unset
	ok                         bool
	reason                     string // the red flag's detailed reason
	// counted: a race committed it; class is then the class it voted for
	// (valid samples only).
	counted bool
	class   uint64
	group   uint64 // its tool-first group, when valid under ToolFirst
	model   string // the model that drew it, when not one of the run's
}

// reset empties the tally for a step of n members' samples, keeping its
// room.
func (t *modelTally) reset(n int) {
	t.mu.Lock()
	t.n, t.by = n, t.by[:0]
	t.mu.Unlock()
}

// record keeps sample i as its draw returned it; reason is its red flag's
// detailed reason, if any; model the identity of the model that drew it
// when it is not one of the run's (an escalated race's), else "".
func (t *modelTally) record(i int, s vote.Sample[intent.Output], reason error, model string) {
	if t.n < 2 && !t.keep {
		return
	}
	var group uint64
	if t.group != nil && s.Err == nil && s.Flag == nil {
		group = t.group(s.Value)
	}
	s.Value = intent.Output{}
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.by) <= i {
		t.by = append(t.by, drawnSample{})
	}
	d := drawnSample{Sample: s, ok: true, group: group, model: model}
	if s.Flag != nil {
		d.reason = s.Flag.Error()
		if reason != nil {
			d.reason = reason.Error()
		}
	}
	t.by[i] = d
}

// counted marks the samples a race committed, indices from to
// from+n-1, with the class each valid one voted for under classes (the
// race's Tally.Classes: a key not in it is its own class). A valid
// sample of another group than chosen (a tool-first vote's winning
// group; 0: none) is red-flagged vote.ErrOtherGroup, as that race
// counted it.
func (t *modelTally) counted(from, n int, classes map[uint64]uint64, chosen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := from; i < from+n && i < len(t.by); i++ {
		d := &t.by[i]
		if !d.ok {
			continue
		}
		d.counted = true
		if chosen != 0 && d.Err == nil && d.Flag == nil && d.group != chosen {
			d.Flag, d.reason = vote.ErrOtherGroup, vote.ErrOtherGroup.Error()
		}
		if d.Err == nil && d.Flag == nil {
			d.class = d.Key
			if c, ok := classes[d.Key]; ok {
				d.class = c
			}
		}
	}
}

// shares splits the samples among the members: the first committed
// samples (by index) count as valid, flagged or failed, the rest as
// cancelled; winner votes are valid votes for key.
func (t *modelTally) shares(committed int, key uint64) []journal.ModelStep {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]journal.ModelStep, t.n)
	for i, s := range t.by {
		m := &out[i%t.n]
		m.Launched++
		m.Usage.Add(s.Usage)
		switch {
		case i >= committed || !s.ok:
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

// samples returns the step's samples as its record keeps them, in index
// order: each sample drawn, with the class the races counted it in
// (left out for the winner's class, winner).
func (t *modelTally) samples(winner uint64) (out []journal.SampleRecord, more int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, d := range t.by {
		if !d.ok {
			continue
		}
		if len(out) == journal.MaxRecordedSamples {
			more++
			continue
		}
		s := journal.SampleRecord{Index: i, Worker: d.Voter, Model: d.model, InputTokens: d.Usage.InputTokens,
			OutputTokens: d.Usage.OutputTokens, Latency: d.Usage.Latency}
		switch {
		case !d.counted:
			s.Cancelled = true
		case d.Err != nil:
			s.Error = true
		case d.Flag != nil:
			s.Flag = cutReason(d.reason)
		default:
			if d.class != winner {
				s.Class = strconv.FormatUint(d.class, 16)
			}
			if d.Key != d.class {
				s.Key = strconv.FormatUint(d.Key, 16)
			}
		}
		out = append(out, s)
	}
	return out, more
}

// cutReason cuts a red flag's reason to journal.MaxFlagReason bytes.
func cutReason(s string) string {
	if len(s) <= journal.MaxFlagReason {
		return s
	}
	return words.Prefix(s, journal.MaxFlagReason-len("…")) + "…"
}
