package maker

import (
	"errors"
	"sync"

	"github.com/mdap-go/mdap/intent"
)

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

// judgeMemo remembers a step's verdicts by reply: samples of one step that
// reply the same text (as agreeing samples often do) are decoded and keyed
// once; a sample whose reply is being judged by another waits for that
// verdict. Task.Decode is a function of the reply (the Task contract), so
// the verdict is the same; replies with native tool calls, and verdicts of
// a panicking Decode, are not shared. Safe for concurrent use.
//
// A step's first memoInline distinct replies are kept in arrays inside
// the memo, found by comparing keys (a reply's text compares in O(1) when
// it is the very string judged before, as a model's repeated reply often
// is), and their verdicts reused step after step; more go to a map.
type judgeMemo struct {
	mu    sync.Mutex
	n     int // verdicts in keys and slab
	keys  [memoInline]replyKey
	slab  [memoInline]verdict
	extra map[replyKey]*verdict // past the first memoInline
}

// memoInline is how many distinct replies of a step the memo keeps
// without a map: most steps see one or two.
const memoInline = 4

// replyKey is a Reply without tool calls, as a map key.
type replyKey struct {
	text, stop string
	in, out    int
	estimated  bool
}

// verdict is one reply's judgement, shared by the memo; set is done once
// it is set.
type verdict struct {
	set    sync.WaitGroup
	shared bool // false: the judging draw's Decode panicked
	judgement
}

// reset forgets every verdict, for the next step; the map's room is kept.
// No draw of the memo's step may still be judging or waiting (a race
// returns only after its draws have), so the inline verdicts may be
// reused.
func (jm *judgeMemo) reset() {
	jm.mu.Lock()
	for i := range jm.n {
		jm.keys[i], jm.slab[i] = replyKey{}, verdict{}
	}
	jm.n = 0
	clear(jm.extra)
	jm.mu.Unlock()
}

// find returns k's verdict, or nil. jm.mu must be held.
func (jm *judgeMemo) find(k replyKey) *verdict {
	for i := range jm.n {
		if jm.keys[i] == k {
			return &jm.slab[i]
		}
	}
	return jm.extra[k]
}

// add returns a new verdict for k, to be set. jm.mu must be held.
func (jm *judgeMemo) add(k replyKey) *verdict {
	if jm.n < memoInline {
		jm.keys[jm.n] = k
		jm.n++
		return &jm.slab[jm.n-1]
	}
	if jm.extra == nil {
		jm.extra = make(map[replyKey]*verdict, 4)
	}
	v := &verdict{}
	jm.extra[k] = v
	return v
}

// judge returns r's judgement: the memo's, if a reply with the same text
// was judged this step, else judgeFn's.
func (jm *judgeMemo) judge(r Reply, judgeFn func() judgement) judgement {
	if len(r.ToolCalls) > 0 {
		return judgeFn()
	}
	k := replyKey{r.Text, r.StopReason, r.InputTokens, r.OutputTokens, r.Estimated}
	jm.mu.Lock()
	if v := jm.find(k); v != nil {
		jm.mu.Unlock()
		v.set.Wait()
		if v.shared {
			return v.judgement
		}
		return judgeFn()
	}
	v := jm.add(k)
	v.set.Add(1)
	jm.mu.Unlock()
	defer v.set.Done() // also if judgeFn panics: waiters then judge for themselves
	j := judgeFn()
	if !errors.Is(j.reason, ErrTaskPanic) {
		v.judgement, v.shared = j, true
	}
	return j
}
