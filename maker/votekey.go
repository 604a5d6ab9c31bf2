package maker

import (
	"github.com/mdap-go/mdap/intent"
)

// VoteKeyer is an optional Task extension for a task that parses replies
// into a typed answer of its own: it returns the answer's vote key
// computed from that answer, which is cheaper than intent.Key's walk of
// the Output's Value (a map built for the journal, canonicalised and then
// hashed). The solver calls DecodeKey instead of Decode for every reply
// it judges in a race.
//
// The contract: DecodeKey returns Decode's error exactly, and with a nil
// error an Output that means what Decode's means: the same Intent, and a
// Value that is either Decode's or a typed equivalent of the task's own,
// one that encoding/json marshals to the same bytes as Decode's Value (a
// json.Marshaler, say), so that intent.Key, intent.Canonical,
// Output.DecodeValue and the journal's record of a winner are those of
// Decode's Output (see intent.Output). Apply must accept that typed Value
// as it accepts Decode's: the solver hands it the winner as DecodeKey
// returned it (a replayed journal gives it the decoded JSON instead), and
// Progress events and Solve's records carry it. When err is nil and out
// has no tool intent, key == intent.Key(out) (so two answers vote
// together exactly when their canonical forms are equal, and journals
// hold the same keys as without it). A key of 0, or an answer with a tool
// intent, is keyed by intent.Key as usual. Test an implementation against
// Decode and intent.Key over many replies (package hanoi's FuzzAnswerKey
// does). Safe for concurrent use, as Decode.
type VoteKeyer interface {
	DecodeKey(r Reply) (out intent.Output, key uint64, err error)
}

// TypedWinner is an optional extension of a VoteKeyer whose DecodeKey
// returns typed Values: TypedWinner turns a winner read back from a
// journal (decoded JSON: maps, lists, strings and json.Numbers) into the
// Output DecodeKey returned for it, so that a resumed run's replayed steps
// carry, to Apply, Progress and the Observer, the winners an uninterrupted
// run's steps carry (reflect.DeepEqual). The contract: for every Output o
// DecodeKey returns, TypedWinner of o's JSON decoded with json.Number
// numbers returns o. An error, or a panic, leaves the winner as read, for
// Apply to take or refuse. Called once per replayed step, from the
// goroutine that called Solve.
type TypedWinner interface {
	TypedWinner(winner intent.Output) (intent.Output, error)
}
