package hanoi

import (
	"fmt"
	"strconv"

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
// text {"move":[d,f,t],"next_state":[[...],[...],[...]]} (MarshalJSON's
// bytes, written on the stack; FuzzAnswerKey checks the two keys agree).
// Two answers have the same key exactly when they are equal (up to 64-bit
// collisions). Cost: linear in the number of disks, no allocation up to
// 30 disks.
func (a Answer) Key() uint64 {
	var buf [256]byte
	h := uint64(fnvOffset)
	for _, c := range a.AppendJSON(buf[:0]) {
		h = (h ^ uint64(c)) * fnvPrime
	}
	if h == 0 {
		return intent.ZeroHashKey
	}
	return h
}

// MarshalJSON writes a as the JSON object {"move":[d,f,t],"next_state":
// [[...],[...],[...]]}, without white space: byte for byte what
// json.Marshal writes for a.Value(), and a's canonical text. So an
// intent.Output whose Value is an Answer has the Key, the Canonical text,
// the DecodeValue result and the json.Marshal bytes (the journal's) of
// one whose Value is a.Value() (TestAnswerValueIsItsMap, FuzzAnswerJSON).
// It never fails. Cost: one allocation (up to MaxDisks disks), linear in
// the number of disks.
func (a Answer) MarshalJSON() ([]byte, error) {
	return a.AppendJSON(make([]byte, 0, 128)), nil // room for any well-formed answer (up to MaxDisks disks)
}

// AppendJSON appends a to b as MarshalJSON writes it and returns the
// extended buffer: for an encoder that writes into its own buffer,
// without encoding/json's reflection and its check of MarshalJSON's
// output. Key hashes these bytes. Cost: linear in the number of disks; no
// allocation when b has room.
func (a Answer) AppendJSON(b []byte) []byte {
	b = append(b, `{"move":[`...)
	b = appendNum(b, a.Move.Disk)
	b = append(b, ',')
	b = appendNum(b, a.Move.From)
	b = append(b, ',')
	b = appendNum(b, a.Move.To)
	b = append(b, `],"next_state":[`...)
	for p, peg := range a.Next {
		if p > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for i, d := range peg {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNum(b, d)
		}
		b = append(b, ']')
	}
	return append(b, "]}"...)
}

// appendNum appends x in decimal; one or two digits without the call.
func appendNum(b []byte, x int) []byte {
	switch {
	case x >= 0 && x < 10:
		return append(b, byte('0'+x))
	case x >= 10 && x < 100:
		return append(b, byte('0'+x/10), byte('0'+x%10))
	}
	return strconv.AppendInt(b, int64(x), 10)
}

// DecodeKey implements maker.VoteKeyer: [Task.Decode]'s answer, as the
// typed [Answer] itself instead of its Value map (the Output's Value is
// an Answer, which marshals, keys and canonicalises exactly as the map;
// see MarshalJSON), and its [Answer.Key]. [Task.Apply] takes such a
// winner as it is. Errors: Decode's.
func (t *Task) DecodeKey(r maker.Reply) (intent.Output, uint64, error) {
	a, err := t.decodeAnswer(r)
	if err != nil {
		return intent.Output{}, 0, err
	}
	return intent.Output{Value: a}, a.Key(), nil
}

var _ maker.TypedWinner = (*Task)(nil)

// TypedWinner implements maker.TypedWinner: a winner read back from a
// journal as the typed Answer DecodeKey returned (AnswerFromValue of its
// Value), so that a resumed run's replayed steps carry the winners of an
// uninterrupted run. Errors: a winner with a tool intent, or whose Value
// is not a well-formed answer (AnswerFromValue's error). Cost: O(n).
func (t *Task) TypedWinner(winner intent.Output) (intent.Output, error) {
	if winner.Intent != nil {
		return winner, fmt.Errorf("%w: the winner proposes tool %q: this task has no tools", ErrFormat, winner.Intent.Tool)
	}
	a, err := AnswerFromValue(winner.Value, t.n)
	if err != nil {
		return winner, err
	}
	return intent.Output{Value: a}, nil
}
