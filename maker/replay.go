package maker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/internal/mono"
	"github.com/mdap-go/mdap/maker/journal"
)

// ErrPendingSideEffect: the journal ends with a side-effect tool call
// that was about to run and may or may not have run. It is never re-run
// silently; see Solver.RerunPending.
var ErrPendingSideEffect = errors.New("side-effect tool call may have run before the crash")

// checkpoint writes a checkpoint for a task that can snapshot itself.
func (r *run) checkpoint(next int) error {
	sn, ok := r.task.(Snapshotter)
	if !ok {
		return nil
	}
	var state json.RawMessage
	var err error
	if p := catch.Try(func() { state, err = sn.Snapshot() }); p != nil {
		err = fmt.Errorf("%w: Snapshot: %w", ErrTaskPanic, p.AsError())
	}
	if err != nil {
		return fmt.Errorf("%w: checkpoint before step %d: %w", ErrStep, next, err)
	}
	total := *r.rep
	total.Resumed, total.Wall = 0, 0
	return r.Journal.WriteCheckpoint(next, state, r.last, total)
}

// replay restores the journal's run: the last checkpoint, if the task can
// restore it, then every step after it through Task.Apply. It returns a
// pending record that ends the journal, if any, for finish. It writes
// nothing.
func (r *run) replay() (*journal.StepRecord, error) {
	j := r.Journal
	if c := j.LastCheckpoint(); c != nil {
		sn, ok := r.task.(Snapshotter)
		if !ok {
			j.FromStart()
		} else {
			var err error
			if p := catch.Try(func() { err = sn.Restore(c.State) }); p != nil {
				err = fmt.Errorf("%w: Restore: %w", ErrTaskPanic, p.AsError())
			}
			if err == nil {
				err = decodeTotal(c.Total, r.rep)
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %s: restoring the checkpoint before step %d: %w", journal.ErrCorrupt, j.Path(), c.Next, err)
			}
			r.rep.Resumed = r.rep.Steps
			r.next, r.last = c.Next, c.Last
		}
	}
	var pending *journal.StepRecord
	err := j.Replay(func(n int, rec *journal.StepRecord) error {
		if r.rep.Done {
			return j.Corrupt(n, "follows the step that finished the task")
		}
		rec.Winner = r.typedWinner(rec.Winner)
		if pending != nil {
			if rec.Step != pending.Step || rec.Pending {
				return j.Corrupt(n, "holds step %d where the pending step %d's record was expected", rec.Step, pending.Step)
			}
			pending = nil
		} else if rec.Step != r.next {
			return j.Corrupt(n, "holds step %d where step %d was expected", rec.Step, r.next)
		}
		if rec.Pending {
			if rec.Winner.Intent == nil {
				return j.Corrupt(n, "is a pending step without a tool call")
			}
			pending = rec
			return nil
		}
		done, err := r.apply(rec.Winner, rec.Observation)
		if err != nil {
			return fmt.Errorf("%w: replaying step %d (%s:%d): %w", ErrStep, rec.Step, j.Path(), n, err)
		}
		r.rep.addStep(rec)
		if err := r.observe(rec); err != nil {
			return err
		}
		r.rep.Resumed++
		r.rep.Done = done
		if r.Progress != nil {
			r.Progress(Event{Step: rec.Step, Replayed: true, Record: rec, Report: r.rep})
		}
		r.last, r.next = rec.Observation, r.next+1
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pending != nil && !r.RerunPending {
		return nil, fmt.Errorf("%w: step %d called %s with %s; check its effect, then resume with RerunPending (--rerun-pending) to run that same call again",
			ErrPendingSideEffect, pending.Step, pending.Winner.Intent.Tool, argsText(pending.Winner.Intent.Args))
	}
	return pending, nil
}

// finish completes a step whose side-effect call was pending at the crash:
// exactly the journaled winner's call runs, and exactly that winner is
// applied. Nothing is voted again.
func (r *run) finish(ctx context.Context, rec *journal.StepRecord) error {
	rec.Pending = false
	if err := r.complete(ctx, rec, mono.Now()); err != nil {
		return err
	}
	r.next = rec.Step + 1
	return nil
}

func argsText(args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Sprint(args)
	}
	return string(b)
}

// typedWinner is a winner read back from the journal as the task's
// TypedWinner gives it, if the task has one and it converts; else as read.
func (r *run) typedWinner(w intent.Output) intent.Output {
	t, ok := r.task.(TypedWinner)
	if !ok {
		return w
	}
	var typed intent.Output
	var err error
	if p := catch.Try(func() { typed, err = t.TypedWinner(w) }); p != nil || err != nil {
		return w // Apply decides, and names the problem
	}
	return typed
}

// decodeTotal reads a checkpoint's report into rep, keeping the k
// policy's state as its JSON, for the policy to restore (KPolicy.Start).
func decodeTotal(raw json.RawMessage, rep *Report) error {
	var total struct {
		Report
		KAuto json.RawMessage `json:"k_auto,omitempty"`
	}
	err := json.Unmarshal(raw, &total)
	*rep, rep.KAuto = total.Report, nil
	if len(total.KAuto) > 0 {
		rep.KAuto = total.KAuto
	}
	return err
}
