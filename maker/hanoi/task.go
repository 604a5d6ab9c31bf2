package hanoi

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

var (
	_ maker.Task           = (*Task)(nil)
	_ maker.StructuredTask = (*Task)(nil)
)

// Prompt implements maker.Task: the current step's [Task.Messages]. last is
// ignored: this task declares no tools, so there is never an observation.
func (t *Task) Prompt(last *intent.Observation) []llms.MessageContent { return t.Messages() }

// Decode implements maker.Task: [Task.Parse] of the reply's text, as an
// intent.Output whose Value is [Answer.Value], so that the paper's format
// and the JSON object vote together for the same answer.
//
// Errors: a format problem wraps both maker.ErrFormat and [ErrFormat],
// and so does a native tool call (this task has no tools); a reply in
// neither format returns intent.Parse's error (an unparseable reply to the
// solver). Safe for concurrent use; it does not change the task.
func (t *Task) Decode(r maker.Reply) (intent.Output, error) {
	a, err := t.decodeAnswer(r)
	if err != nil {
		return intent.Output{}, err
	}
	return intent.Output{Value: a.Value()}, nil
}

// decodeAnswer is Decode's answer, before its Value is built.
func (t *Task) decodeAnswer(r maker.Reply) (Answer, error) {
	if len(r.ToolCalls) > 0 {
		return Answer{}, fmt.Errorf("%w: %w: a native tool call: this task has no tools", maker.ErrFormat, ErrFormat)
	}
	a, err := t.Parse(r.Text)
	if err != nil {
		if errors.Is(err, ErrFormat) {
			return Answer{}, fmt.Errorf("%w: %w", maker.ErrFormat, err)
		}
		return Answer{}, err
	}
	return a, nil
}

// Apply implements maker.Task: [Task.Advance] with the winner's answer:
// an [Answer] Value (as DecodeKey returns) as it is, any other Value read
// back by [AnswerFromValue] (so a Value replayed from a journal, with
// float64 or json.Number numbers, gives the same state). Advance checks
// a hand-built Answer as ParseReply would. obs is ignored. It is
// deterministic.
//
// Errors (the task is then unchanged): [ErrFormat] (wrapped) when the
// winner is not a well-formed answer or carries a tool intent, which
// Decode never lets vote; [ErrDone] after the last step.
func (t *Task) Apply(winner intent.Output, obs *intent.Observation) (done bool, err error) {
	if winner.Intent != nil {
		return false, fmt.Errorf("%w: the winner proposes tool %q: this task has no tools", ErrFormat, winner.Intent.Tool)
	}
	a, ok := winner.Value.(Answer)
	if !ok {
		var err error
		if a, err = AnswerFromValue(winner.Value, t.n); err != nil {
			return false, err
		}
	}
	return t.Advance(a)
}

// snapshot is a Task in a journal checkpoint.
type snapshot struct {
	N       int   `json:"disks"`
	State   State `json:"state"`
	Prev    *Move `json:"previous,omitempty"`
	Steps   int   `json:"steps"`
	Wrong   int   `json:"wrong"`
	Illegal int   `json:"illegal"`
}

// Snapshot implements maker.Snapshotter: the state, the previous move and
// the counts, O(n) bytes.
func (t *Task) Snapshot() (json.RawMessage, error) {
	return json.Marshal(snapshot{N: t.n, State: t.state, Prev: t.prev, Steps: t.steps, Wrong: t.wrong, Illegal: t.illegal})
}

// Restore implements maker.Snapshotter. Errors: a snapshot that does not
// parse, is of another number of disks, or holds an invalid state.
func (t *Task) Restore(b json.RawMessage) error {
	var s snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hanoi: bad snapshot: %w", err)
	}
	if s.N != t.n {
		return fmt.Errorf("hanoi: snapshot of %d disks, the task has %d", s.N, t.n)
	}
	for p := range s.State {
		if s.State[p] == nil {
			s.State[p] = []int{}
		}
	}
	if err := s.State.Validate(t.n); err != nil {
		return fmt.Errorf("hanoi: bad snapshot: %w", err)
	}
	t.state, t.prev, t.steps, t.wrong, t.illegal = s.State, s.Prev, s.Steps, s.Wrong, s.Illegal
	return nil
}

// schemaStatesMax is the most disks for which AnswerSchema lists every
// well-formed state (3^n of them: 729 for 6 disks).
const schemaStatesMax = 6

// AnswerSchema implements maker.StructuredTask: the JSON object answer,
// {"move": [disk, from, to], "next_state": [[...], [...], [...]]}. The
// move is one of the n*6 moves of a disk 1..n between two different pegs
// (an enum of triples: a grammar over it cannot write a malformed one).
// Up to schemaStatesMax disks, next_state is one of the 3^n well-formed
// states (each disk once, every peg decreasing); with more disks the
// schema says only three lists of disks 1..n, at most n each, and Decode
// checks the rest, as it always does. The schema says nothing of which
// move is right. Cost: O(3^n) up to 6 disks, O(n) above.
func (t *Task) AnswerSchema() json.RawMessage {
	var moves [][3]int
	for d := 1; d <= t.n; d++ {
		for from := range 3 {
			for to := range 3 {
				if from != to {
					moves = append(moves, [3]int{d, from, to})
				}
			}
		}
	}
	nextState := map[string]any{
		"type": "array", "description": "the disks on pegs 0, 1 and 2, each from bottom to top",
	}
	if t.n <= schemaStatesMax {
		nextState["enum"] = allStates(t.n)
	} else {
		disks := make([]int, t.n)
		for i := range disks {
			disks[i] = i + 1
		}
		nextState["items"] = map[string]any{"type": "array", "items": map[string]any{"type": "integer", "enum": disks}, "maxItems": t.n}
		nextState["minItems"], nextState["maxItems"] = 3, 3
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"move":       map[string]any{"type": "array", "description": "[disk id, from peg, to peg]", "enum": moves},
			"next_state": nextState,
		},
		"required":             []string{"move", "next_state"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(schema) // maps of strings, ints and slices always marshal
	return b
}

// allStates lists the 3^n well-formed states of n disks: each disk on one
// of the pegs, every peg from the largest disk at the bottom.
func allStates(n int) []State {
	var out []State
	pegOf := make([]int, n+1)
	var rec func(d int)
	rec = func(d int) {
		if d == 0 {
			s := State{{}, {}, {}}
			for disk := n; disk >= 1; disk-- {
				s[pegOf[disk]] = append(s[pegOf[disk]], disk)
			}
			out = append(out, s)
			return
		}
		for p := range 3 {
			pegOf[d] = p
			rec(d - 1)
		}
	}
	rec(n)
	return out
}

var _ maker.Checker = (*Task)(nil)

// CorrectAnswer implements maker.Checker: the iterative rule's answer
// ([CorrectAnswer]) in the current state, the answer [Task.WrongSteps]
// counts as right; false when the rule has no move (after an illegal
// step) or the task is done. Cost: O(n).
func (t *Task) CorrectAnswer() (intent.Output, bool) {
	if t.Done() {
		return intent.Output{}, false
	}
	a, err := CorrectAnswer(t.state, t.prev)
	if err != nil {
		return intent.Output{}, false
	}
	return intent.Output{Value: a.Value()}, true
}
