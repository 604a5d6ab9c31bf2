package maker

import (
	"cmp"
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/stats"
	"github.com/mdap-go/mdap/vote"
)

// ErrFlagAlarm: a step's red-flag rate jumped far above the run's so far
// (see FlagAlarm) and the escalation policy is EscalateStop or unset: the
// run stops at that step, its winner not taken. The error is a
// *FlagAlarmError; it wraps ErrContested and ErrStep.
var ErrFlagAlarm = fmt.Errorf("%w: red-flag rate alarm", ErrContested)

// DefaultFlagAlarmLevel is FlagAlarm's default Level: a step is an alarm
// when a rate as high as its own, or higher, had at most this chance at
// the run's rate so far.
const DefaultFlagAlarmLevel = 1e-9

// DefaultFlagAlarmHistory is FlagAlarm's default History: the samples the
// run must have drawn before a step's rate is judged against them.
const DefaultFlagAlarmHistory = 100

// FlagAlarm is the red-flag-rate alarm. A step whose replies are
// red-flagged far more often than the run's so far is suspect: the
// model is lost on it (the prompt is broken, the state is odd), and the
// few replies that did vote are no better than the rest; a winner among
// them is a minority the run should not act on silently. After a step's
// race is decided, with at least History samples (valid and red-flagged)
// drawn by the steps before it, the step is an alarm when the chance of
// at least its number of red flags among its samples, at the run's rate
// so far (red flags plus one over samples plus two), is below Level (a
// binomial tail). The step is then decided again as an escalated step is
// (see Escalation), a warning logged; under EscalateStop or no Escalation
// the run stops with a *FlagAlarmError naming the step. A step the
// escalation policy already decided is not judged again.
//
// The history is the run's report, replayed steps included, so a
// resumed run judges a step exactly as an uninterrupted one. The
// false-alarm rate at a steady red-flag rate is in docs/matching.md
// (TestFlagAlarmFalseAlarmRate, behind MDAP_FLAG_ALARM_MC).
type FlagAlarm struct {
	// Off turns the alarm off.
	Off bool `json:"off,omitempty"`
	// Level is the alarm's chance threshold, in (0, 1); 0 means
	// DefaultFlagAlarmLevel.
	Level float64 `json:"level,omitempty"`
	// History is the samples drawn before a step needed to judge it; 0
	// means DefaultFlagAlarmHistory.
	History int `json:"history,omitempty"`
}

// FlagAlarmError is a step's red-flag-rate alarm.
type FlagAlarmError struct {
	// Step is the alarmed step.
	Step int
	// Flagged of Samples were red-flagged in the step (valid plus
	// flagged: provider errors are not replies).
	Flagged, Samples int
	// RunRate is the run's red-flag rate before the step, over
	// RunSamples samples.
	RunRate    float64
	RunSamples int
	// Chance is the binomial tail: at least Flagged of Samples at
	// RunRate.
	Chance float64
}

func (e *FlagAlarmError) Error() string {
	return fmt.Sprintf("red-flag rate alarm: %d of %d samples red-flagged (%.0f%%) against %.1f%% over the run's %d samples before step %d (a chance of %.2g at that rate): its winner is not taken; stopped for review (escalation policy stop, the default: escalate with raise-k or model to decide such a step again)",
		e.Flagged, e.Samples, 100*float64(e.Flagged)/float64(e.Samples), 100*e.RunRate, e.RunSamples, e.Step, e.Chance)
}

// Unwrap returns ErrFlagAlarm.
func (e *FlagAlarmError) Unwrap() error { return ErrFlagAlarm }

func (a FlagAlarm) check() error {
	switch {
	case !(a.Level >= 0 && a.Level < 1):
		return fielderr.New(configName, "FlagAlarm.Level", a.Level, fmt.Sprintf("use a chance in (0, 1), or 0 for DefaultFlagAlarmLevel (%g)", DefaultFlagAlarmLevel))
	case a.History < 0:
		return fielderr.New(configName, "FlagAlarm.History", a.History, fmt.Sprintf("use 1 or more samples, or 0 for DefaultFlagAlarmHistory (%d)", DefaultFlagAlarmHistory))
	}
	return nil
}

// setting is the alarm as the journal's settings record it ("" for the
// default).
func (a FlagAlarm) setting() string {
	switch {
	case a.Off:
		return "off"
	case a.Level != 0 || a.History != 0:
		return fmt.Sprintf("level=%g history=%d", a.Level, a.History)
	}
	return ""
}

// judge returns the alarm of a step with flagged of samples red-flagged,
// after a run of runFlagged of runSamples, or nil.
func (a FlagAlarm) judge(step, flagged, samples, runFlagged, runSamples int) *FlagAlarmError {
	if a.Off || runSamples < cmp.Or(a.History, DefaultFlagAlarmHistory) || flagged == 0 {
		return nil
	}
	rate := float64(runFlagged+1) / float64(runSamples+2)
	if float64(flagged) <= rate*float64(samples) {
		return nil
	}
	chance := stats.BinomialTail(flagged, samples, rate)
	if chance >= cmp.Or(a.Level, DefaultFlagAlarmLevel) {
		return nil
	}
	return &FlagAlarmError{Step: step, Flagged: flagged, Samples: samples, RunRate: float64(runFlagged) / float64(runSamples), RunSamples: runSamples, Chance: chance}
}

// alarm is the FlagAlarm's doubt of a decided race, nil when there is
// no alarm: decided again at the escalation's K, or stopped when the
// policy is EscalateStop or unset.
func (r *run) alarm(res vote.Result[intent.Output]) *doubt {
	a := r.FlagAlarm.judge(r.next, res.Flagged, res.Valid+res.Flagged, r.rep.Flagged, r.rep.Valid+r.rep.Flagged)
	if a == nil {
		return nil
	}
	e := r.Escalation
	if e == nil || e.Policy == EscalateStop {
		return &doubt{stop: a}
	}
	return &doubt{k: e.K, why: fmt.Sprintf("a red-flag rate alarm (%d of %d samples red-flagged against %.1f%% before, a chance of %.2g)", a.Flagged, a.Samples, 100*a.RunRate, a.Chance)}
}
