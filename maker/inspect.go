package maker

import (
	"strconv"

	"github.com/mdap-go/mdap/intent"
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

// Inspect judges reply r as the solver's draw does, with the red flags of
// rules under the cap maxTokens (0 means DefaultMaxTokens) and decode as
// the task's Decode (nil means DecodeReply). It is how a user sees why two
// replies did or did not vote together. Safe for concurrent use if decode
// is; cost: one parse and one key.
func Inspect(r Reply, maxTokens int, rules FlagRules, decode func(Reply) (intent.Output, error)) Verdict {
	return inspect(r, maxTokens, rules, decode, nil)
}

// InspectIn judges reply r as a run of task by s draws it: s's reply cap
// (MaxTokens) and red flags (Flags), task's Decode (DecodeReply for a nil
// task), and a tool intent's arguments normalised by s.Executor (as
// Solver.Key does: arguments its schema refuses after healing are the
// "invalid arguments" red flag). The Key is the reply's own; KeyVerdicts
// then gives the class keys a race tallying the replies in order would
// count. Safe for concurrent use; cost: one parse, one normalisation and
// one key.
func (s *Solver) InspectIn(task Task, r Reply) Verdict {
	var decode func(Reply) (intent.Output, error)
	if task != nil {
		decode = task.Decode
	}
	return inspect(r, s.maxTokens(), s.Flags, decode, s.normalizer())
}

func inspect(r Reply, maxTokens int, rules FlagRules, decode func(Reply) (intent.Output, error), normalize func(intent.ToolIntent) (intent.ToolIntent, error)) Verdict {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	if decode == nil {
		decode = DecodeReply
	}
	j := judge(r, maxTokens, rules, decode, normalize)
	if j.flag != nil {
		return Verdict{Flag: j.flag.Error(), Reason: j.reason.Error()}
	}
	out := j.out
	canon, err := intent.Canonical(out)
	if err != nil { // judge keyed it, so it has a canonical form
		return Verdict{Flag: ErrUnparseable.Error(), Reason: err.Error()}
	}
	return Verdict{Output: &out, Canonical: string(canon), Key: strconv.FormatUint(intent.KeyOf(canon), 16)}
}
