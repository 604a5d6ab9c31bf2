package budget

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBudgetCreditAheadCountsOnce: what CreditAhead counted is not counted
// again by the Credits of the resumes it stands for, and what no resume
// credits stays counted; Settled counts neither.
func TestBudgetCreditAheadCountsOnce(t *testing.T) {
	b := New(1)
	b.Credit(0.2)
	b.CreditAhead(0.3) // two journals: 0.1 and 0.2
	assert.InDelta(t, 0.5, b.Spent(), 1e-12, "counted at once")
	b.Credit(0.1)
	assert.InDelta(t, 0.5, b.Spent(), 1e-12, "a resume credits what was counted ahead: nothing twice")
	b.Credit(0.25) // a journal that grew after the count: 0.05 more
	assert.InDelta(t, 0.55, b.Spent(), 1e-12, "beyond what was counted ahead, a credit counts")
	b.Credit(0.1)
	assert.InDelta(t, 0.65, b.Spent(), 1e-12)
	assert.Zero(t, b.Settled(), "no call was made under this budget")
	b.Settle(0, 0.01)
	assert.InDelta(t, 0.01, b.Settled(), 1e-12)
	assert.InDelta(t, 0.66, b.Spent(), 1e-12)
}
