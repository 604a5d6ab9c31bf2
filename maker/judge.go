package maker

import "github.com/mdap-go/mdap/intent"

// judgement is the draw's verdict on one reply: either an answer with its
// vote key (flag nil), or a red flag with the detailed reason it was
// raised. A reason wrapping ErrTaskPanic is not a red flag but the task's
// bug: the draw reports it as the sample's error.
type judgement struct {
	out    intent.Output
	key    uint64
	flag   error // one of the red-flag sentinels, or nil
	reason error // why flag was raised; ErrTaskPanic's wrapper for a panic
}

// judge is the draw's verdict on a reply. normalize, if not nil, puts a
// tool intent's arguments in the form its tool's schema wants before the
// key is taken, so calls that will run alike vote together. The red flags
// are checked before decode is called, so an oversized reply is never
// parsed.
func judge(r Reply, maxTokens int, rules FlagRules, decode func(Reply) (intent.Output, error), normalize func(intent.ToolIntent) (intent.ToolIntent, error)) judgement {
	if flag := rules.check(r, maxTokens); flag != nil {
		return judgement{flag: flag, reason: flag}
	}
	out, err := decode(r)
	if err == nil && out.Intent != nil && normalize != nil {
		var ti intent.ToolIntent
		if ti, err = normalize(*out.Intent); err != nil {
			return judgement{flag: ErrInvalidArguments, reason: err}
		}
		out.Intent = &ti
	}
	var key uint64
	if err == nil {
		key, err = intent.Key(out)
	}
	if err != nil {
		return judgement{flag: classify(err), reason: err}
	}
	return judgement{out: out, key: key}
}

// judgeKeyed is judge for a VoteKeyer's decode.
func judgeKeyed(r Reply, maxTokens int, rules FlagRules, decodeKey func(Reply) (intent.Output, uint64, error), normalize func(intent.ToolIntent) (intent.ToolIntent, error)) judgement {
	if flag := rules.check(r, maxTokens); flag != nil {
		return judgement{flag: flag, reason: flag}
	}
	out, key, err := decodeKey(r)
	if err != nil {
		return judgement{flag: classify(err), reason: err}
	}
	if out.Intent != nil || key == 0 {
		return judge(r, maxTokens, rules, func(Reply) (intent.Output, error) { return out, nil }, normalize)
	}
	return judgement{out: out, key: key}
}
