package maker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/internal/mono"
)

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
	return r.Journal.writeCheckpoint(next, state, r.last, *r.rep)
}

// replay restores the journal's run: the last checkpoint, if the task can
// restore it, then every step after it through Task.Apply. It returns a
// pending record that ends the journal, if any, for finish. It writes
// nothing.
func (r *run) replay() (*StepRecord, error) {
	j := r.Journal
	if c := j.checkpoint; c != nil {
		sn, ok := r.task.(Snapshotter)
		if !ok {
			j.fromStart()
		} else {
			var err error
			if p := catch.Try(func() { err = sn.Restore(c.State) }); p != nil {
				err = fmt.Errorf("%w: Restore: %w", ErrTaskPanic, p.AsError())
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %s: restoring the checkpoint before step %d: %w", ErrJournalCorrupt, j.path(), c.Next, err)
			}
			*r.rep = c.Total
			r.rep.Resumed = r.rep.Steps
			r.next, r.last = c.Next, c.Last
		}
	}
	var pending *StepRecord
	err := j.records(func(n int, raw []byte) error {
		if r.rep.Done {
			return j.corrupt(n, "follows the step that finished the task")
		}
		rec, err := decodeRecord(raw)
		if err != nil {
			return j.corrupt(n, "is not a step record: %v", err)
		}
		rec.Winner = r.typedWinner(rec.Winner)
		if pending != nil {
			if rec.Step != pending.Step || rec.Pending {
				return j.corrupt(n, "holds step %d where the pending step %d's record was expected", rec.Step, pending.Step)
			}
			pending = nil
		} else if rec.Step != r.next {
			return j.corrupt(n, "holds step %d where step %d was expected", rec.Step, r.next)
		}
		if rec.Pending {
			if rec.Winner.Intent == nil {
				return j.corrupt(n, "is a pending step without a tool call")
			}
			pending = rec
			return nil
		}
		done, err := r.apply(rec.Winner, rec.Observation)
		if err != nil {
			return fmt.Errorf("%w: replaying step %d (%s:%d): %w", ErrStep, rec.Step, j.path(), n, err)
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
func (r *run) finish(ctx context.Context, rec *StepRecord) error {
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

// decodeRecord reads a journal step line strictly, with numbers kept as
// json.Number, as intent.Parse gives them, so a replayed winner is the
// value that won.
func decodeRecord(raw []byte) (*StepRecord, error) {
	var rec StepRecord
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value on the line")
	}
	return &rec, nil
}
