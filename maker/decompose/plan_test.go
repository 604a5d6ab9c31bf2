package decompose

import (
	"testing"

	"github.com/mdap-go/mdap/vote/laws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecisionBoundCountsTheFullTree(t *testing.T) {
	b, err := DecisionBound(Caps{MaxDepth: 2, MaxBreadth: 3}, true)
	require.NoError(t, err)
	// Depth 0 and 1 hold 1 + 3 nodes that may split; 1 + 3 + 9 may be solved.
	assert.Equal(t, map[Role]int{RoleAtomic: 4, RoleDecompose: 4, RoleDiscriminate: 4, RoleCompose: 4, RoleSolve: 13}, b)
	b, err = DecisionBound(Caps{MaxDepth: 2, MaxBreadth: 3}, false)
	require.NoError(t, err)
	assert.NotContains(t, b, RoleDiscriminate)
	_, err = DecisionBound(Caps{MaxDepth: 60, MaxBreadth: 4}, false)
	assert.ErrorIs(t, err, ErrPlan)
}

func TestPlanMeetsTheTargetWithTheLeastK(t *testing.T) {
	p := map[Role]float64{RoleAtomic: 0.99, RoleDecompose: 0.9, RoleDiscriminate: 0.8, RoleSolve: 0.9, RoleCompose: 0.95}
	pl, err := NewPlan(Caps{MaxDepth: 8, MaxBreadth: 2}, false, p, 0.95)
	require.NoError(t, err)
	assert.Equal(t, 255*3+511, pl.Decisions)
	assert.LessOrEqual(t, pl.Failure(), 1-0.95)
	for r, k := range pl.K {
		assert.LessOrEqual(t, 1-laws.PStep(p[r], k), pl.PerDecision, r)
		if k > 1 {
			assert.Greater(t, 1-laws.PStep(p[r], k-1), pl.PerDecision, "%s: k-1 would do", r)
		}
	}
	assert.Greater(t, pl.K[RoleDecompose], pl.K[RoleAtomic], "a worse p needs a larger k")
	_, err = NewPlan(Caps{MaxDepth: 3, MaxBreadth: 2}, false, map[Role]float64{RoleAtomic: 0.5, RoleDecompose: 0.9, RoleSolve: 0.9, RoleCompose: 0.9}, 0.95)
	assert.ErrorIs(t, err, ErrPlan)
}
