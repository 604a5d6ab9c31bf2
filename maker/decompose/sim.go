package decompose

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/tmc/langchaingo/llms"
)

// SimRole is how the simulated model plays one role.
type SimRole struct {
	// P is the probability that a valid reply is right, in (0, 1].
	P float64 `json:"p"`
	// Rivals is the number of distinct wrong answers the wrong replies
	// spread over (sim.Config.WrongAnswers); 0 and 1 mean one. The
	// atomicity role has one whatever it says.
	Rivals int `json:"rivals"`
	// CoFailure is the share of nodes, in [0, 1], at which the role's
	// errors are co-failed: every wrong reply there is the same wrong
	// answer, and it is the one drawn with probability P (the right one
	// with 1−P), so that no margin protects the node. Which nodes is drawn
	// per (seed, node, role).
	CoFailure float64 `json:"cofailure"`
}

// SimConfig is the simulated model of every role.
type SimConfig struct {
	// Seed is the root of every draw.
	Seed uint64 `json:"seed"`
	// Roles is each role's play; a role not named plays at P DefaultP,
	// Rivals sim.DefaultWrongAnswers, no co-failure.
	Roles map[Role]SimRole `json:"roles"`
	// FlagRate is the share of red-flag replies; Latency each call's.
	FlagRate float64     `json:"flag_rate"`
	Latency  sim.Latency `json:"-"`
}

// SimModels is the simulated model playing every role of a family, from
// its Truth. It implements CoFailures.
type SimModels struct {
	cfg    SimConfig
	family string
	models map[Role]llms.Model
}

// NewSim builds one simulated model per role over fam's truth. Errors:
// ErrConfig (a *maker.FieldError naming the role's field), or
// sim.Config.Validate's.
func NewSim(fam Family, truth Truth, cfg SimConfig) (*SimModels, error) {
	s := &SimModels{cfg: cfg, family: fam.Name(), models: map[Role]llms.Model{}}
	for _, r := range Roles {
		play, ok := cfg.Roles[r]
		if !ok {
			play = SimRole{P: DefaultP, Rivals: sim.DefaultWrongAnswers}
		}
		if !(play.CoFailure >= 0 && play.CoFailure <= 1) {
			return nil, &fielderr.Error{Config: "decompose.SimConfig", Fields: []fielderr.Field{{Name: "Roles[" + string(r) + "].CoFailure", Value: play.CoFailure}}, Fix: "use a share from 0 to 1"}
		}
		if r == RoleAtomic {
			play.Rivals = 1
		}
		m, err := sim.New(&roleOracle{fam: fam, truth: truth, role: r, sims: s, share: play.CoFailure},
			sim.Config{Seed: cfg.Seed, P: play.P, WrongAnswers: max(play.Rivals, 1), FlagRate: cfg.FlagRate, Latency: cfg.Latency})
		if err != nil {
			return nil, fmt.Errorf("role %s: %w", r, err)
		}
		s.models[r] = m
	}
	return s, nil
}

// Models returns the role models, for Config.Models.
func (s *SimModels) Models() map[Role]llms.Model {
	out := make(map[Role]llms.Model, len(s.models))
	for r, m := range s.models {
		out[r] = m
	}
	return out
}

// CoFailed reports whether role r is co-failed at node.
func (s *SimModels) CoFailed(r Role, node string) bool {
	return s.coFailed(r, nodeSalt(node, r), s.cfg.Roles[r].CoFailure)
}

func (s *SimModels) coFailed(r Role, step int, share float64) bool {
	if share <= 0 {
		return false
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|%d", s.cfg.Seed, r, step)
	return float64(h.Sum64()>>11)/(1<<53) < share
}

// roleOracle answers one role's prompts from the family's truth.
type roleOracle struct {
	fam   Family
	truth Truth
	role  Role
	sims  *SimModels
	share float64
}

// Correct is the right reply, or at a co-failed node the agreed wrong one.
func (o *roleOracle) Correct(q sim.Query) (string, error) {
	if o.sims.coFailed(o.role, q.Step, o.share) {
		return o.reply(q, 0, false)
	}
	return o.reply(q, 0, true)
}

// Wrong is the variant-th wrong reply, or at a co-failed node the right one.
func (o *roleOracle) Wrong(q sim.Query, variant int) (string, error) {
	if o.sims.coFailed(o.role, q.Step, o.share) {
		return o.reply(q, 0, true)
	}
	return o.reply(q, variant, false)
}

// reply writes the right reply (right) or the variant-th wrong one.
func (o *roleOracle) reply(q sim.Query, variant int, right bool) (string, error) {
	v, err := ReadView(q.Prompt)
	if err != nil {
		return "", err
	}
	var out any
	switch o.role {
	case RoleAtomic:
		a := o.truth.Atomic(v.Problem)
		out = map[string]bool{"atomic": a == right}
	case RoleDecompose:
		var p Proposal
		if right {
			p, err = o.truth.Split(v.Problem)
		} else {
			p, err = o.truth.WrongSplit(v.Problem, variant)
		}
		out = p
	case RoleDiscriminate:
		var n int
		n, err = o.pick(v, variant, right)
		out = map[string]int{"pick": n}
	default:
		var a json.RawMessage
		if o.role == RoleSolve {
			a, err = o.truth.Solve(v.Problem)
		} else {
			a, err = o.truth.Compose(v.Problem, v.Composition, v.Answers)
		}
		if err == nil && !right {
			a, err = o.truth.WrongAnswer(v.Problem, a, variant)
		}
		out = map[string]json.RawMessage{"answer": a}
	}
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// pick is the discriminator's reply: the right candidate's number as
// shown (the right split's; without one, a fixed favourite, the
// candidate of least canonical text), or the variant-th other one.
func (o *roleOracle) pick(v View, variant int, right bool) (int, error) {
	if len(v.Candidates) == 0 {
		return 0, fmt.Errorf("no candidates")
	}
	want := ""
	if p, err := o.truth.Split(v.Problem); err == nil {
		if j, err := proposalJSON(o.fam, p); err == nil {
			want = string(j)
		}
	}
	best, bestText := -1, ""
	for i, c := range v.Candidates {
		j, err := proposalJSON(o.fam, c)
		if err != nil {
			return 0, err
		}
		if string(j) == want {
			best = i
			break
		}
		if best < 0 || string(j) < bestText {
			best, bestText = i, string(j)
		}
	}
	if right || len(v.Candidates) == 1 {
		return best + 1, nil
	}
	other := variant % (len(v.Candidates) - 1)
	if other >= best {
		other++
	}
	return other + 1, nil
}

// OneModel returns the simulated model of every role as one llms.Model:
// each call goes to the role whose reply format its system message ends
// with (see Messages), and draws exactly as that role's model would. It
// is what one worker serving one route plays (a NATS engine's worker),
// and AllRoles(s.OneModel()) decides as s.Models() does. A call that is
// no role's prompt fails. Safe for concurrent use.
func (s *SimModels) OneModel() llms.Model { return roleSwitch{s} }

// roleSwitch is SimModels.OneModel.
type roleSwitch struct{ s *SimModels }

// GenerateContent hands the call to its role's simulated model.
func (m roleSwitch) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	for _, mc := range msgs {
		if mc.Role != llms.ChatMessageTypeSystem {
			continue
		}
		for _, p := range mc.Parts {
			t, ok := p.(llms.TextContent)
			if !ok {
				continue
			}
			for _, r := range Roles {
				if strings.HasSuffix(t.Text, replyFormat[r]) {
					return m.s.models[r].GenerateContent(ctx, msgs, opts...)
				}
			}
		}
	}
	return nil, fmt.Errorf("%w: not a decomposition role's prompt (no role's reply format ends its system message)", maker.ErrPermanent)
}

// Call is GenerateContent over one prompt.
func (m roleSwitch) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// Identity names the simulated model of every role: its family, seed,
// roles and red-flag rate (not its latency), so that workers serving it
// (a route of the NATS engine) play one family alike.
func (m roleSwitch) Identity() string {
	b, _ := json.Marshal(m.s.cfg)
	return "sim-roles:" + m.s.family + string(b)
}
