// Package inspect shows what a run makes of a reply before any vote: its
// red flag, or the answer it votes with, that answer's canonical form and
// its key (what `maker parse` and the MCP server's parse and vote tools
// print). Every verdict is maker.Solver.Judge's, the one a run's draw
// gives its samples.
package inspect

import (
	"context"
	"strconv"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
)

// Verdict is what the solver makes of one reply, before any vote: its red
// flag, or the answer it votes with, that answer's canonical form and its
// key. Two replies vote together exactly when their keys are equal.
type Verdict struct {
	// Flag is the red flag's name ("empty", "cut off", "overlong",
	// "unparseable", "format", ...), empty when the reply may vote.
	Flag string `json:"flag,omitempty"`
	// Reason says in detail why the reply was flagged.
	Reason string `json:"reason,omitempty"`
	// Output is the answer the reply votes with.
	Output *intent.Output `json:"output,omitempty"`
	// Canonical is the answer's canonical JSON text (intent.Canonical).
	Canonical string `json:"canonical,omitempty"`
	// Key is the vote key, in hex, as the journal writes it.
	Key string `json:"key,omitempty"`
}

// Reply judges reply r as the solver's draw does, with the red flags of
// rules under the cap maxTokens (0 means maker.DefaultMaxTokens) and decode as
// the task's Decode (nil means maker.DecodeReply). It is how a user sees why two
// replies did or did not vote together. Safe for concurrent use if decode
// is; cost: one parse and one key.
func Reply(r maker.Reply, maxTokens int, rules maker.FlagRules, decode func(maker.Reply) (intent.Output, error)) Verdict {
	s := maker.Solver{Config: maker.Config{MaxTokens: maxTokens, Flags: rules}}
	return verdict(s.Judge(r, decode))
}

// In judges reply r as a run of task by s draws it: s's reply cap
// (MaxTokens) and red flags (Flags), task's Decode (maker.DecodeReply for a nil
// task), and a tool intent's arguments normalised by s.Executor (as
// Solver.Key does: arguments its schema refuses after healing are the
// "invalid arguments" red flag). The Key is the reply's own; ClassKeys
// then gives the class keys a race tallying the replies in order would
// count. Safe for concurrent use; cost: one parse, one normalisation and
// one key.
func In(s *maker.Solver, task maker.Task, r maker.Reply) Verdict {
	var decode func(maker.Reply) (intent.Output, error)
	if task != nil {
		decode = task.Decode
	}
	return verdict(s.Judge(r, decode))
}

func verdict(j maker.Judgement) Verdict {
	if j.Flag != nil {
		return Verdict{Flag: j.Flag.Error(), Reason: j.Reason.Error()}
	}
	out := j.Output
	canon, err := intent.Canonical(out)
	if err != nil { // Judge keyed it, so it has a canonical form
		return Verdict{Flag: maker.ErrUnparseable.Error(), Reason: err.Error()}
	}
	return Verdict{Output: &out, Canonical: string(canon), Key: strconv.FormatUint(intent.KeyOf(canon), 16)}
}

// ClassKeys sets the Key of each voting Verdict of vs (Reply's or In's,
// for replies in the order a race would tally them) to the class key a
// run of task by s would give it (maker.Solver.ClassesIn), so that
// verdicts with equal keys are exactly the replies such a run votes
// together. Flagged verdicts are left as they are. ctx is ClassesIn's:
// a task's matcher may call a model. Errors: ClassesIn's. Cost:
// ClassesIn's.
func ClassKeys(ctx context.Context, s *maker.Solver, task maker.Task, vs []Verdict) error {
	var outs []intent.Output
	var at []int
	for i, v := range vs {
		if v.Output != nil {
			outs = append(outs, *v.Output)
			at = append(at, i)
		}
	}
	keys, err := s.ClassesIn(ctx, task, outs)
	if err != nil {
		return err
	}
	for j, i := range at {
		vs[i].Key = strconv.FormatUint(keys[j], 16)
	}
	return nil
}
