package decompose

import (
	"errors"
	"fmt"
	"math"

	"github.com/mdap-go/mdap/vote/laws"
)

// ErrPlan: no k meets the target for a role's p (p at or below 1/2), or
// the caps or the target are out of range.
var ErrPlan = errors.New("no plan meets the target")

// Plan is the tree's failure budget: an upper bound on the decisions of
// each role from the depth and breadth caps, the failure each decision may
// have (1−T split evenly over the bound), and the k of each role that
// keeps a decision of that role's p within it.
type Plan struct {
	// Target is T: the tree is right with probability at least T while
	// every role's votes are right with their p and independent.
	Target float64 `json:"target"`
	// Bound is each role's upper bound on decisions; Decisions their sum.
	Bound     map[Role]int `json:"bound"`
	Decisions int          `json:"decisions"`
	// PerDecision is the failure probability allowed to one decision:
	// (1−T)/Decisions.
	PerDecision float64 `json:"per_decision"`
	// K is each role's margin: the smallest k with a decision's failure,
	// 1 − laws.PStep(p, k), at most PerDecision.
	K map[Role]int `json:"k"`
	// P is the p each role's k was chosen for.
	P map[Role]float64 `json:"p"`
}

// Caps bound the tree: a node at depth MaxDepth (the root is at 0) is
// atomic; a proposal of more than MaxBreadth subproblems is a red flag.
type Caps struct {
	MaxDepth   int `flag:"max-depth" usage:"depth cap: a node this deep is atomic (0: the family's, its right tree's depth plus one)"`
	MaxBreadth int `flag:"max-breadth" usage:"breadth cap: a proposal of more subproblems is a red flag (0: the family's, 2)"`
}

// DecisionBound is an upper bound on each role's decisions in any tree
// within caps: every node at a depth below MaxDepth has at most one
// atomicity vote, one proposal, one pick (when discriminate) and one
// composition; every node may be solved. Nodes: the full MaxBreadth-ary
// tree of depth MaxDepth. Errors wrap ErrPlan when the tree's node count
// overflows 2^40.
func DecisionBound(c Caps, discriminate bool) (map[Role]int, error) {
	if c.MaxDepth < 0 || c.MaxBreadth < 2 {
		return nil, fmt.Errorf("%w: caps depth %d, breadth %d (want depth >= 0, breadth >= 2)", ErrPlan, c.MaxDepth, c.MaxBreadth)
	}
	inner, level := 0.0, 1.0
	for d := 0; d < c.MaxDepth; d++ {
		inner += level
		level *= float64(c.MaxBreadth)
	}
	all := inner + level
	if all > 1<<40 {
		return nil, fmt.Errorf("%w: caps depth %d, breadth %d allow %.3g nodes; lower them", ErrPlan, c.MaxDepth, c.MaxBreadth, all)
	}
	b := map[Role]int{RoleAtomic: int(inner), RoleDecompose: int(inner), RoleCompose: int(inner), RoleSolve: int(all)}
	if discriminate {
		b[RoleDiscriminate] = int(inner)
	}
	return b, nil
}

// NewPlan spreads the failure budget 1−target over DecisionBound(caps,
// discriminate) and chooses each role's k for its p (laws.KMin of one
// decision at 1 − PerDecision). By the union bound the tree then fails
// with probability at most 1−target when each role decides right with
// probability at least its p, independently, with one rival answer (more
// rivals only split the wrong votes). Errors wrap ErrPlan: a target
// outside (0, 1), a p at or below 1/2 for a role the bound counts, bad
// caps. Cost: a few logarithms per role.
func NewPlan(caps Caps, discriminate bool, p map[Role]float64, target float64) (Plan, error) {
	if !(target > 0 && target < 1) {
		return Plan{}, fmt.Errorf("%w: target %v (want 0 < T < 1)", ErrPlan, target)
	}
	bound, err := DecisionBound(caps, discriminate)
	if err != nil {
		return Plan{}, err
	}
	pl := Plan{Target: target, Bound: bound, K: map[Role]int{}, P: map[Role]float64{}}
	for _, n := range bound {
		pl.Decisions += n
	}
	pl.PerDecision = (1 - target) / float64(pl.Decisions)
	for _, r := range Roles {
		if _, ok := bound[r]; !ok {
			continue
		}
		pr, ok := p[r]
		if !ok {
			return Plan{}, fmt.Errorf("%w: no p for role %s", ErrPlan, r)
		}
		k, err := laws.KMin(1, pr, 1-pl.PerDecision)
		if err != nil {
			return Plan{}, fmt.Errorf("%w: role %s: %w", ErrPlan, r, err)
		}
		pl.K[r], pl.P[r] = k, pr
	}
	return pl, nil
}

// Failure is the plan's bound on the tree's failure probability: the sum
// over roles of Bound × (1 − PStep(p, k)), at most 1 − Target.
func (pl Plan) Failure() float64 {
	f := 0.0
	for r, n := range pl.Bound {
		f += float64(n) * (1 - laws.PStep(pl.P[r], pl.K[r]))
	}
	return math.Min(f, 1)
}
