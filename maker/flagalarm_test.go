package maker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagJumpAt answers right, with a steady red flag (sample 1 of every
// fourth step cut off, about one sample in nine), except that the first
// 20 samples of step jump are unparseable: that step's red-flag rate
// jumps to 20 of 22.
func flagJumpAt(jump int) func(id SampleID, p string) (string, string) {
	return func(id SampleID, p string) (string, string) {
		n := current(p)
		switch {
		case id.Step == jump && id.Index < 20:
			return `{"next": `, "stop"
		case id.Step%4 == 0 && id.Index == 1:
			return fmt.Sprintf(`{"next": %d}`, n+1), "length"
		}
		return fmt.Sprintf(`{"next": %d}`, n+1), "stop"
	}
}

func TestFlagRateJumpStopsTheStep(t *testing.T) {
	for _, parallel := range []int{1, 4} {
		s := &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: parallel}}, Model: &scripted{reply: flagJumpAt(60)}}
		rep, err := s.Solve(context.Background(), &counter{target: 80})
		require.ErrorIs(t, err, ErrFlagAlarm)
		require.ErrorIs(t, err, ErrContested)
		require.ErrorIs(t, err, ErrStep)
		assert.Contains(t, err.Error(), "step 60:")
		assert.Contains(t, err.Error(), "20 of 22 samples red-flagged")
		var alarm *FlagAlarmError
		require.True(t, errors.As(err, &alarm))
		assert.Equal(t, 60, alarm.Step)
		assert.Less(t, alarm.Chance, DefaultFlagAlarmLevel)
		assert.Equal(t, 60, rep.Steps, "no step after the alarm, and not the alarmed one")
	}
}

func TestFlagRateJumpEscalates(t *testing.T) {
	var step60 *journal.StepRecord
	// After 100: the step is not contested (the first race decides it
	// within 22 samples); the alarm escalates it.
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}, Escalation: &Escalation{Policy: EscalateRaiseK, After: 100}}, Model: &scripted{reply: flagJumpAt(60)},
		Progress: func(e Event) {
			if e.Step == 60 {
				c := *e.Record
				step60 = &c
			}
		}}
	rep, err := s.Solve(context.Background(), &counter{target: 80})
	require.NoError(t, err)
	require.NotNil(t, step60)
	assert.True(t, step60.Contested && step60.Escalated)
	assert.Equal(t, 2+4, step60.Valid, "the first race's 2 votes, then 4 at twice k")
	assert.Equal(t, 1, rep.Escalated)
	assert.Equal(t, 80, rep.Steps)
}

func TestFlagAlarmOffAndSteady(t *testing.T) {
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}, FlagAlarm: FlagAlarm{Off: true}}, Model: &scripted{reply: flagJumpAt(60)}}
	_, err := s.Solve(context.Background(), &counter{target: 80})
	require.NoError(t, err)

	// The same run without the jump: no alarm.
	s = &Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: flagJumpAt(-1)}}
	rep, err := s.Solve(context.Background(), &counter{target: 80})
	require.NoError(t, err)
	assert.Zero(t, rep.Escalated)

	// Too little history: a jump at step 10 (about 22 samples before it)
	// is not judged.
	s = &Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: flagJumpAt(10)}}
	_, err = s.Solve(context.Background(), &counter{target: 20})
	require.NoError(t, err)

	for _, bad := range []FlagAlarm{{Level: -1}, {Level: 1}, {History: -1}} {
		require.ErrorIs(t, (Config{FlagAlarm: bad}).Validate(), ErrConfig, "%+v", bad)
	}
}

func TestFlagAlarmResumesTheSame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}, MaxSteps: 59}, Model: &scripted{reply: flagJumpAt(60)}, Journal: j}).Solve(context.Background(), &counter{target: 80})
	require.ErrorIs(t, err, ErrStepLimit)
	require.NoError(t, j.Close())
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: flagJumpAt(60)}, Journal: j}).Solve(context.Background(), &counter{target: 80})
	require.ErrorIs(t, err, ErrFlagAlarm, "a resumed run judges the step against the same history")
	assert.Contains(t, err.Error(), "step 60:")
	require.NoError(t, j.Close())
}

func TestSelfCorrectionFlag(t *testing.T) {
	on := FlagRules{SelfCorrection: true}
	for _, c := range []struct {
		text string
		flag bool
	}{
		{`{"next": 3}`, false},
		{`Wait, the answer is {"next": 3}`, true},
		{`{"next": 2} wait. {"next": 3}`, true},
		{`Actually, {"next": 4}`, true},
		{`I made a mistake above. {"next": 4}`, true},
		{`On second thought: {"next": 4}`, true},
		{`{"next": 3, "note": "Wait, this is inside a string"}`, false},
		{`{"note": "say \"Actually, no\" here", "next": 3}`, false},
		{`Awaiting nothing, {"next": 3}`, false},
		{`The actual answer: {"next": 3}`, false},
	} {
		r := Reply{Text: c.text, StopReason: "stop"}
		if c.flag {
			assert.ErrorIs(t, on.check(r, 0), ErrSelfCorrection, c.text)
		} else {
			assert.NoError(t, on.check(r, 0), c.text)
		}
		assert.NoError(t, FlagRules{}.check(r, 0), "off by default: %s", c.text)
	}
}

func TestSelfCorrectionFlagInARun(t *testing.T) {
	// Sample 0 of every step corrects itself into a wrong answer.
	reply := func(id SampleID, p string) (string, string) {
		n := current(p)
		if id.Index == 0 {
			return fmt.Sprintf(`{"next": %d} Wait, I made a mistake: {"next": %d}`, n+1, n+5), "stop"
		}
		return fmt.Sprintf(`{"next": %d}`, n+1), "stop"
	}
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}, Flags: FlagRules{SelfCorrection: true}}, Model: &scripted{reply: reply}}).Solve(context.Background(), &counter{target: 10})
	require.NoError(t, err)
	assert.Equal(t, 10, rep.Flags["self-correction"])
	assert.Equal(t, 20, rep.Valid)
}
