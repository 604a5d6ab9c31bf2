package decompose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/stats"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// calibrationStep is added to a node's salt for calibration samples, so
// that they are not the samples a run of the same node draws.
const calibrationStep = 1 << 40

// Calibration is each role's measured p: the share of its valid replies
// that were right, on the nodes of the right trees of some problems.
type Calibration struct {
	// Valid and Right count each role's valid replies and the right ones
	// among them; red-flagged and failed calls are in neither.
	Valid map[Role]int `json:"valid"`
	Right map[Role]int `json:"right"`
	// P is Right/Valid; Lower its one-sided 95% Clopper-Pearson lower
	// bound, the conservative p for Settings.P.
	P     map[Role]float64 `json:"p"`
	Lower map[Role]float64 `json:"lower"`
}

// CalibrateOptions bound a calibration.
type CalibrateOptions struct {
	// Samples is how many replies each role gives at each node; 0 means 5.
	Samples int
	// MaxNodes is how many nodes of each problem's right tree are asked,
	// breadth first from the root; 0 means 16.
	MaxNodes int
	// Solver's MaxTokens, Flags, Temperature, Timeout and CallOptions
	// apply to each call.
	Solver maker.Config
}

// Calibrate measures each role's p on models: at the first MaxNodes nodes
// of the right tree of each input (truth's splits), each role is asked
// Samples times and its valid replies are judged against truth (the
// discriminator is shown the right split and two wrong ones, shuffled).
// It needs a family with an exact truth (multiply, sort), and works with
// real models as with the simulated one.
//
// Cost: up to len(inputs) × MaxNodes × 5 roles × Samples model calls,
// one at a time. Errors: ErrInput, ErrNoModel, ctx.Err(), truth's.
func Calibrate(ctx context.Context, fam Family, truth Truth, inputs []json.RawMessage, models map[Role]llms.Model, o CalibrateOptions) (Calibration, error) {
	if o.Samples <= 0 {
		o.Samples = 5
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = 16
	}
	for _, r := range Roles {
		if models[r] == nil {
			return Calibration{}, fmt.Errorf("%w: %s", ErrNoModel, r)
		}
	}
	c := Calibration{Valid: map[Role]int{}, Right: map[Role]int{}, P: map[Role]float64{}, Lower: map[Role]float64{}}
	for n, raw := range inputs {
		in, err := canon(fam, raw)
		if err != nil {
			return Calibration{}, err
		}
		type node struct {
			path  string
			input json.RawMessage
		}
		queue := []node{{"c" + strconv.Itoa(n), in}}
		for asked := 0; len(queue) > 0 && asked < o.MaxNodes; asked++ {
			nd := queue[0]
			queue = queue[1:]
			asks, err := calibrationAsks(fam, truth, nd.input)
			if err != nil {
				return Calibration{}, err
			}
			for _, a := range asks {
				if err := c.ask(ctx, fam, models[a.role], nd.path, a, o); err != nil {
					return Calibration{}, err
				}
			}
			if !fam.Indivisible(nd.input) {
				if p, err := truth.Split(nd.input); err == nil {
					for i, s := range p.Subproblems {
						queue = append(queue, node{nd.path + "." + strconv.Itoa(i), s})
					}
				}
			}
		}
	}
	for _, r := range Roles {
		if v := c.Valid[r]; v > 0 {
			c.P[r] = float64(c.Right[r]) / float64(v)
			c.Lower[r] = stats.LowerBound(float64(c.Right[r]), float64(v), 0.95)
		}
	}
	return c, nil
}

// calibrationAsk is one role's question at a node and its right answer.
type calibrationAsk struct {
	role   Role
	msgs   func(i int) []llms.MessageContent
	decode func(i int) decoder
	right  func(i int) json.RawMessage
}

// calibrationAsks are the questions of every role at a node of the right
// tree: the right children's answers for the composer, the right split
// among wrong ones for the discriminator.
func calibrationAsks(fam Family, truth Truth, in json.RawMessage) ([]calibrationAsk, error) {
	prompts, name := fam.Prompts(), fam.Name()
	fixed := func(r Role, v View, dec decoder, right json.RawMessage) calibrationAsk {
		msgs := Messages(prompts, r, v)
		return calibrationAsk{role: r, msgs: func(int) []llms.MessageContent { return msgs },
			decode: func(int) decoder { return dec }, right: func(int) json.RawMessage { return right }}
	}
	ans, err := truth.Solve(in)
	if err != nil {
		return nil, err
	}
	if ans, err = fam.CanonAnswer(in, ans); err != nil {
		return nil, err
	}
	atomic, _ := json.Marshal(truth.Atomic(in))
	view := View{Family: name, Problem: in}
	asks := []calibrationAsk{fixed(RoleAtomic, view, DecodeAtomic, atomic), fixed(RoleSolve, view, decodeAnswer(fam, in), ans)}
	if fam.Indivisible(in) {
		return asks, nil
	}
	split, err := truth.Split(in)
	if err != nil {
		return nil, err
	}
	right, err := proposalJSON(fam, split)
	if err != nil {
		return nil, err
	}
	breadth := max(len(split.Subproblems), 2)
	asks = append(asks, fixed(RoleDecompose, view, decodeProposal(fam, breadth), right))
	var answers []json.RawMessage
	for _, s := range split.Subproblems {
		a, err := truth.Solve(s)
		if err != nil {
			return nil, err
		}
		answers = append(answers, a)
	}
	composed, err := truth.Compose(in, split.Composition, answers)
	if err != nil {
		return nil, err
	}
	if composed, err = fam.CanonAnswer(in, composed); err != nil {
		return nil, err
	}
	asks = append(asks, fixed(RoleCompose, View{Family: name, Problem: in, Composition: split.Composition, Answers: answers}, decodeAnswer(fam, in), composed))
	var cands []Proposal
	for v := -1; v < 2; v++ { // the right split, then two wrong ones, canonical
		p := split
		if v >= 0 {
			if p, err = truth.WrongSplit(in, v); err != nil {
				return nil, err
			}
		}
		j, err := proposalJSON(fam, p)
		if err != nil {
			return nil, err
		}
		if p, err = readProposal(j); err != nil {
			return nil, err
		}
		cands = append(cands, p)
	}
	// Candidate i of vote j is cands[(i+j) mod 3]: every position in turn.
	shown := func(j int) []Proposal {
		out := make([]Proposal, len(cands))
		for i := range out {
			out[i] = cands[(i+j)%len(cands)]
		}
		return out
	}
	asks = append(asks, calibrationAsk{role: RoleDiscriminate,
		msgs: func(j int) []llms.MessageContent {
			return Messages(prompts, RoleDiscriminate, View{Family: name, Problem: in, Candidates: shown(j)})
		},
		decode: func(j int) decoder {
			return func(r maker.Reply) (intent.Output, error) {
				n, err := DecodePick(r, len(cands))
				if err != nil {
					return intent.Output{}, err
				}
				return proposalOutput(shown(j)[n-1])
			}
		},
		right: func(int) json.RawMessage { return right }})
	return asks, nil
}

// ask draws a role's samples at a node and counts the right ones.
func (c *Calibration) ask(ctx context.Context, fam Family, model llms.Model, path string, a calibrationAsk, o CalibrateOptions) error {
	salt := nodeSalt(path, a.role) + calibrationStep
	for i := range o.Samples {
		d := drawOne(ctx, o.Solver, model, salt, i, a.msgs(i), a.decode(i))
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.err != nil || d.flag != nil {
			continue
		}
		v, err := outputJSON(d.out)
		if err != nil {
			return err
		}
		c.Valid[a.role]++
		if bytes.Equal(v, a.right(i)) {
			c.Right[a.role]++
		}
	}
	return nil
}
