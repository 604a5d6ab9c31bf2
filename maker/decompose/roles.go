package decompose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// Prompts are the instructions of each role for real models: what the
// family's problems mean and how the role does its part. The engine adds
// the reply format and the node's data (see [Messages]); a general
// family for real models sets them from a spec.
type Prompts struct {
	Atomic, Decompose, Discriminate, Solve, Compose string
}

func (p Prompts) of(r Role) string {
	switch r {
	case RoleAtomic:
		return p.Atomic
	case RoleDecompose:
		return p.Decompose
	case RoleDiscriminate:
		return p.Discriminate
	case RoleSolve:
		return p.Solve
	default:
		return p.Compose
	}
}

// The reply format each role is told, after its instructions.
var replyFormat = map[Role]string{
	RoleAtomic:       `Reply with JSON only: {"atomic": true} if the problem should be solved directly, {"atomic": false} if it should be split.`,
	RoleDecompose:    `Reply with JSON only: {"subproblems": [INPUT, ...], "composition": COMPOSITION}, each INPUT a problem input of the same form as PROBLEM, at least 2 of them.`,
	RoleDiscriminate: `Reply with JSON only: {"pick": N}, N the number of the best candidate decomposition.`,
	RoleSolve:        `Reply with JSON only: {"answer": ANSWER}.`,
	RoleCompose:      `Reply with JSON only: {"answer": ANSWER}, the answer to PROBLEM composed from the subproblems' ANSWERS as COMPOSITION says.`,
}

// The labels of the data lines of a role's prompt; the simulated model's
// oracle reads them back.
const (
	lineFamily      = "FAMILY: "
	lineProblem     = "PROBLEM: "
	lineComposition = "COMPOSITION: "
	lineAnswers     = "ANSWERS: "
	lineCandidates  = "CANDIDATES:"
)

// View is what a role's prompt shows of a node: the problem, and for the
// composer the composition and the subproblems' answers, for the
// discriminator the candidate proposals in the order shown.
type View struct {
	Family      string
	Problem     json.RawMessage
	Composition json.RawMessage
	Answers     []json.RawMessage
	Candidates  []Proposal
}

// Messages returns the prompt of role r for view v under prompts p: a
// system message with the role's instructions and reply format (the same
// for every node, so providers cache it), then a human message with the
// node's data, one labelled line each. Cost: linear in the data shown.
func Messages(p Prompts, r Role, v View) []llms.MessageContent {
	sys := strings.TrimSpace(p.of(r) + "\n\n" + replyFormat[r])
	var b strings.Builder
	b.WriteString(lineFamily + v.Family + "\n")
	b.WriteString(lineProblem)
	b.Write(v.Problem)
	b.WriteByte('\n')
	if r == RoleCompose {
		b.WriteString(lineComposition)
		b.Write(v.Composition)
		b.WriteByte('\n')
		ans, _ := json.Marshal(v.Answers) // RawMessages of canonical JSON: cannot fail
		b.WriteString(lineAnswers)
		b.Write(ans)
		b.WriteByte('\n')
	}
	if r == RoleDiscriminate {
		b.WriteString(lineCandidates + "\n")
		for i, c := range v.Candidates {
			cj, _ := json.Marshal(c)
			fmt.Fprintf(&b, "%d: %s\n", i+1, cj)
		}
	}
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, sys),
		llms.TextParts(llms.ChatMessageTypeHuman, b.String()),
	}
}

// ReadView reads the node's data back from a prompt's text (as
// sim.PromptText joins it): what the simulated model's oracle does.
// Errors: a missing or malformed line.
func ReadView(text string) (View, error) {
	var v View
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, lineFamily):
			v.Family = strings.TrimPrefix(l, lineFamily)
		case strings.HasPrefix(l, lineProblem):
			v.Problem = json.RawMessage(strings.TrimPrefix(l, lineProblem))
		case strings.HasPrefix(l, lineComposition):
			v.Composition = json.RawMessage(strings.TrimPrefix(l, lineComposition))
		case strings.HasPrefix(l, lineAnswers):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(l, lineAnswers)), &v.Answers); err != nil {
				return View{}, fmt.Errorf("answers line: %w", err)
			}
		case l == lineCandidates:
			for i+1 < len(lines) && lines[i+1] != "" {
				i++
				n, rest, ok := strings.Cut(lines[i], ": ")
				if _, err := strconv.Atoi(n); !ok || err != nil {
					return View{}, fmt.Errorf("candidate line %q", lines[i])
				}
				var c Proposal
				if err := json.Unmarshal([]byte(rest), &c); err != nil {
					return View{}, fmt.Errorf("candidate line: %w", err)
				}
				v.Candidates = append(v.Candidates, c)
			}
		}
	}
	if v.Family == "" || len(v.Problem) == 0 {
		return View{}, fmt.Errorf("no %q or %q line", strings.TrimSpace(lineFamily), strings.TrimSpace(lineProblem))
	}
	return v, nil
}

// decoder turns a role's reply into its vote: an intent.Output whose Value
// is the decision in canonical form. An error wraps maker.ErrFormat (a
// red flag).
type decoder func(r maker.Reply) (intent.Output, error)

// formatErr is a role reply's format red flag.
func formatErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", maker.ErrFormat, fmt.Sprintf(format, a...))
}

// decodeObject reads a reply's JSON object into v.
func decodeObject(r maker.Reply, v any) error {
	out, err := maker.DecodeReply(r)
	if err != nil {
		return err
	}
	if out.Intent != nil {
		return formatErr("a tool call, where a JSON answer was asked for")
	}
	if err := out.DecodeValue(v); err != nil {
		return formatErr("%v", err)
	}
	return nil
}

// valueOf is canonical JSON as a Value intent.Canonical reads back to the
// same text (numbers kept exact).
func valueOf(canon json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(canon))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, formatErr("%v", err)
	}
	return v, nil
}

// DecodeAtomic reads an atomicity reply, {"atomic": true|false}; the vote
// is on the boolean. Errors wrap maker.ErrFormat or package intent's.
func DecodeAtomic(r maker.Reply) (intent.Output, error) {
	var a struct {
		Atomic *bool `json:"atomic"`
	}
	if err := decodeObject(r, &a); err != nil {
		return intent.Output{}, err
	}
	if a.Atomic == nil {
		return intent.Output{}, formatErr(`no "atomic" boolean`)
	}
	return intent.Output{Value: *a.Atomic}, nil
}

// DecodePick reads a discriminator's reply, {"pick": N}, N in 1..n; the
// Value is N. Errors wrap maker.ErrFormat or package intent's.
func DecodePick(r maker.Reply, n int) (int, error) {
	var a struct {
		Pick *int `json:"pick"`
	}
	if err := decodeObject(r, &a); err != nil {
		return 0, err
	}
	if a.Pick == nil || *a.Pick < 1 || *a.Pick > n {
		return 0, formatErr(`"pick" must be a number from 1 to %d`, n)
	}
	return *a.Pick, nil
}

// decodeProposal reads a decomposer's reply into a proposal of between 2
// and breadth subproblems, each canonical in fam; the Value is the
// proposal in canonical form, so equal proposals vote together.
func decodeProposal(fam Family, breadth int) decoder {
	return func(r maker.Reply) (intent.Output, error) {
		p, err := DecodeProposal(fam, breadth, r)
		if err != nil {
			return intent.Output{}, err
		}
		return proposalOutput(p)
	}
}

// DecodeProposal reads a decomposer's reply: {"subproblems": [...],
// "composition": ...} with 2 to breadth subproblems, each an input fam
// accepts, returned canonical. Errors wrap maker.ErrFormat or package
// intent's.
func DecodeProposal(fam Family, breadth int, r maker.Reply) (Proposal, error) {
	var p Proposal
	if err := decodeObject(r, &p); err != nil {
		return Proposal{}, err
	}
	if n := len(p.Subproblems); n < 2 || n > breadth {
		return Proposal{}, formatErr("%d subproblems; want 2 to %d", n, breadth)
	}
	if len(p.Composition) == 0 || string(p.Composition) == "null" {
		return Proposal{}, formatErr(`no "composition"`)
	}
	for i, s := range p.Subproblems {
		c, err := fam.Canon(s)
		if err != nil {
			return Proposal{}, formatErr("subproblem %d: %v", i+1, err)
		}
		p.Subproblems[i] = c
	}
	return canonProposal(p)
}

// canonProposal puts p's composition in canonical form.
func canonProposal(p Proposal) (Proposal, error) {
	v, err := valueOf(p.Composition)
	if err != nil {
		return Proposal{}, err
	}
	c, err := intent.Canonical(intent.Output{Value: v})
	if err != nil {
		return Proposal{}, formatErr("composition: %v", err)
	}
	p.Composition = c
	return p, nil
}

// proposalOutput is the vote of proposal p (canonical).
func proposalOutput(p Proposal) (intent.Output, error) {
	subs := make([]any, len(p.Subproblems))
	for i, s := range p.Subproblems {
		v, err := valueOf(s)
		if err != nil {
			return intent.Output{}, err
		}
		subs[i] = v
	}
	comp, err := valueOf(p.Composition)
	if err != nil {
		return intent.Output{}, err
	}
	return intent.Output{Value: map[string]any{"subproblems": subs, "composition": comp}}, nil
}

// proposalKey is the vote key of canonical proposal p.
func proposalKey(p Proposal) (uint64, error) {
	out, err := proposalOutput(p)
	if err != nil {
		return 0, err
	}
	return intent.Key(out)
}

// decodeAnswer reads a solver's or composer's reply, {"answer": ...},
// the answer canonical in fam for input.
func decodeAnswer(fam Family, input json.RawMessage) decoder {
	return func(r maker.Reply) (intent.Output, error) {
		a, err := DecodeAnswer(fam, input, r)
		if err != nil {
			return intent.Output{}, err
		}
		v, err := valueOf(a)
		if err != nil {
			return intent.Output{}, err
		}
		return intent.Output{Value: v}, nil
	}
}

// DecodeAnswer reads a solver's or composer's reply, {"answer": ...}, and
// returns the answer to input in fam's canonical form. Errors wrap
// maker.ErrFormat or package intent's.
func DecodeAnswer(fam Family, input json.RawMessage, r maker.Reply) (json.RawMessage, error) {
	var a struct {
		Answer json.RawMessage `json:"answer"`
	}
	if err := decodeObject(r, &a); err != nil {
		return nil, err
	}
	if len(a.Answer) == 0 || string(a.Answer) == "null" {
		return nil, formatErr(`no "answer"`)
	}
	c, err := fam.CanonAnswer(input, a.Answer)
	if err != nil {
		return nil, formatErr("answer: %v", err)
	}
	return c, nil
}

// outputJSON is the canonical JSON of a decided Value.
func outputJSON(o intent.Output) (json.RawMessage, error) {
	return intent.Canonical(intent.Output{Value: o.Value})
}
