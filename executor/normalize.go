package executor

import (
	"github.com/mdap-go/mdap/intent"
)

// Normalize returns in as this executor would run it, so that samples
// proposing the same call in different spellings vote together: for a
// registered tool (or the index tool), a fresh copy of the arguments,
// JSON-normalised (numbers as json.Number, an integral float such as 2.0
// as 2) and healed against the tool's schema ("paths": "[\"src\"]" becomes
// ["src"]), with Tool and Rationale unchanged. The copy shares no map or
// slice with in.
//
// When the tool is registered, the policy allows it and its healed
// arguments do not validate (or break an input limit), Normalize returns
// the zero ToolIntent and an error wrapping [ErrInvalidArgs] whose message
// is exactly the content of the denial Execute would give.
//
// A call that cannot or may not run is not an error here, since it still
// votes and is denied with a readable observation if it wins: for an
// unknown or unavailable tool (or a name longer than [MaxToolNameBytes])
// in is returned as it is, sharing its Args map; for a tool the policy
// withholds, the healed copy is returned without validation (in itself
// when its arguments cannot be normalised).
//
// For every in, Execute(Normalize(in)) gives the observation of
// Execute(in), except Duration and Healed: the healing already happened,
// so the second call has nothing to heal (use [Executor.Check] on in to
// learn what was healed). Normalize is idempotent.
//
// Cost: for an unknown tool, a map lookup; for a registered tool also a
// policy check, one JSON marshal and decode of the arguments, the healing
// walk and one schema validation: tens of microseconds and under a hundred
// allocations for a typical call (BenchmarkNormalize measures it). It is
// pure: nothing runs, nothing is logged, the executor is not changed. Safe
// for concurrent use.
func (e *Executor) Normalize(in intent.ToolIntent) (intent.ToolIntent, error) {
	if len(in.Tool) > MaxToolNameBytes { // bounded before any work
		return in, nil
	}
	reg := e.lookup(in.Tool)
	if reg == nil {
		return in, nil
	}
	if e.policy.Allows(reg.entry) != nil {
		args, _, probs := e.normalizeArgs(reg, in.Args)
		if len(probs) > 0 {
			return in, nil
		}
		return intent.ToolIntent{Tool: in.Tool, Args: args, Rationale: in.Rationale}, nil
	}
	args, _, probs := e.prepare(reg, in.Args)
	if len(probs) > 0 {
		content, _ := capText(invalidMessage(in.Tool, reg.doc, probs), e.outputCap)
		return intent.ToolIntent{}, &reasonError{sentinel: ErrInvalidArgs, msg: content}
	}
	return intent.ToolIntent{Tool: in.Tool, Args: args, Rationale: in.Rationale}, nil
}
