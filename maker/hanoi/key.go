package hanoi

import (
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
)

var _ maker.VoteKeyer = (*Task)(nil)

// FNV-1a, 64 bits, as intent.KeyOf hashes a canonical text.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Key returns the vote key of a's Value, intent.Key(intent.Output{Value:
// a.Value()}), without building the Value: FNV-1a over the canonical
// text {"move":[d,f,t],"next_state":[[...],[...],[...]]} written straight
// into the hash (FuzzAnswerKey checks the two agree). Two answers have
// the same key exactly when they are equal (up to 64-bit collisions).
// Cost: linear in the number of disks, no allocation.
func (a Answer) Key() uint64 {
	h := uint64(fnvOffset)
	str := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * fnvPrime
		}
	}
	var buf [20]byte
	num := func(x int) {
		for _, c := range strconv.AppendInt(buf[:0], int64(x), 10) {
			h = (h ^ uint64(c)) * fnvPrime
		}
	}
	str(`{"move":[`)
	num(a.Move.Disk)
	str(",")
	num(a.Move.From)
	str(",")
	num(a.Move.To)
	str(`],"next_state":[`)
	for p, peg := range a.Next {
		if p > 0 {
			str(",")
		}
		str("[")
		for i, d := range peg {
			if i > 0 {
				str(",")
			}
			num(d)
		}
		str("]")
	}
	str("]}")
	if h == 0 {
		return intent.ZeroHashKey
	}
	return h
}

// DecodeKey implements maker.VoteKeyer: [Task.Decode] and the answer's
// [Answer.Key], which equals intent.Key of the Output Decode returns.
func (t *Task) DecodeKey(r maker.Reply) (intent.Output, uint64, error) {
	a, err := t.decodeAnswer(r)
	if err != nil {
		return intent.Output{}, 0, err
	}
	v := a.Value()
	t.typed.put(v, a)
	return intent.Output{Value: v}, a.Key(), nil
}

// typedMemo remembers the answers DecodeKey decoded since the last
// Advance, by the identity of the Value map it returned, so that Apply of
// a winner whose Value is one of those maps (as the solver's winners are)
// takes the parsed answer instead of reading the map back. It holds the
// maps, so an address cannot be reused while it is remembered; it is
// cleared at every Advance, and holds at most typedMax answers. Safe for
// concurrent use.
type typedMemo struct {
	mu sync.Mutex
	m  map[unsafe.Pointer]typedAnswer
}

type typedAnswer struct {
	value map[string]any
	a     Answer
}

const typedMax = 64

func (tm *typedMemo) put(v map[string]any, a Answer) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.m == nil {
		tm.m = make(map[unsafe.Pointer]typedAnswer, 4)
	}
	if len(tm.m) < typedMax {
		tm.m[reflect.ValueOf(v).UnsafePointer()] = typedAnswer{v, a}
	}
}

// get returns the answer whose Value v is, if DecodeKey made it.
func (tm *typedMemo) get(v any) (Answer, bool) {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return Answer{}, false
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	ta, ok := tm.m[reflect.ValueOf(m).UnsafePointer()]
	return ta.a, ok
}

func (tm *typedMemo) clear() {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	clear(tm.m)
}
