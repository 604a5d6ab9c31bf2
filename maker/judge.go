package maker

import "github.com/mdap-go/mdap/intent"

// Judgement is the verdict on one reply before any vote: either the answer
// it votes with and its vote key (Flag nil), or the red flag that keeps it
// from voting with the detailed reason it was raised.
type Judgement struct {
	// Output is the answer the reply votes with, and Key its vote key
	// (intent.Key of Output), when Flag is nil.
	Output intent.Output
	Key    uint64
	// Flag is one of the red-flag sentinels (ErrEmpty, ErrCutOff,
	// ErrOverlong, ErrUnparseable, ErrFormat, ErrInvalidArguments, ...),
	// or nil.
	Flag error
	// Reason is why Flag was raised, in detail. A Reason wrapping
	// ErrTaskPanic is not a red flag but the task's bug: a run's draw
	// reports it as the sample's error.
	Reason error
}

// Judge judges reply r as a run of s draws it, before any vote: the red
// flags of s.Flags under s's reply cap (MaxTokens, DefaultMaxTokens when
// 0), checked before decode so that an oversized reply is never parsed;
// then decode (a task's Decode; DecodeReply when nil); then a tool
// intent's arguments normalized by s.Executor, if set (arguments its
// schema refuses after healing are ErrInvalidArguments); then the key.
// It is the one verdict a race's samples, a Sampler's and the inspection of a
// saved reply (maker/inspect) share, so two replies it gives equal Keys
// vote together in a run of s (before a task's matcher, ClassesIn, joins
// answers it deems equivalent). A panic in decode is not recovered.
// Safe for concurrent use if decode and the Executor are; cost: one
// parse, one normalisation and one key, no model call.
func (s *Solver) Judge(r Reply, decode func(Reply) (intent.Output, error)) Judgement {
	if decode == nil {
		decode = DecodeReply
	}
	return judge(r, s.maxTokens(), s.Flags, func(r Reply) (intent.Output, uint64, error) {
		out, err := decode(r)
		return out, 0, err
	}, s.normalizer())
}

// judge is the draw's verdict on a reply, for a decode that may key its
// answer itself (a VoteKeyer's): a key of 0, or an answer with a tool
// intent, is keyed by intent.Key. normalize, if not nil, first puts a
// tool intent's arguments in the form its tool's schema wants, so calls
// that will run alike vote together.
func judge(r Reply, maxTokens int, rules FlagRules, decodeKey func(Reply) (intent.Output, uint64, error), normalize func(intent.ToolIntent) (intent.ToolIntent, error)) Judgement {
	if flag := rules.check(r, maxTokens); flag != nil {
		return Judgement{Flag: flag, Reason: flag}
	}
	out, key, err := decodeKey(r)
	if err == nil && out.Intent != nil {
		key = 0
		if normalize != nil {
			var ti intent.ToolIntent
			if ti, err = normalize(*out.Intent); err != nil {
				return Judgement{Flag: ErrInvalidArguments, Reason: err}
			}
			out.Intent = &ti
		}
	}
	if err == nil && key == 0 {
		key, err = intent.Key(out)
	}
	if err != nil {
		return Judgement{Flag: classify(err), Reason: err}
	}
	return Judgement{Output: out, Key: key}
}
