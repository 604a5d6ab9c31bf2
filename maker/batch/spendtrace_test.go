package batch

import (
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/budget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A SpendTrace records the budget's spend, earlier runs' credit included,
// at most every SpendEvery while the batch progresses, and always at the
// end; it passes the progress on.
func TestSpendTraceRecordsTheBudgetsSpend(t *testing.T) {
	t.Parallel()
	budget := budget.New(0)
	budget.Credit(0.5) // what earlier runs spent
	trace := NewSpendTrace(budget)
	passed := 0
	progress := trace.Wrap(func(Progress) { passed++ })
	start := time.Now()
	for range 100 {
		progress(Progress{})
	}
	elapsed := time.Since(start)
	budget.Credit(0.25)
	points := trace.End()
	assert.Equal(t, 100, passed, "every progress is passed on")
	require.GreaterOrEqual(t, len(points), 2, "the first point, and the last")
	assert.LessOrEqual(t, len(points), 2+int(elapsed/SpendEvery), "at most one point per SpendEvery")
	assert.Equal(t, 0.5, points[0].Dollars)
	assert.Equal(t, 0.75, points[len(points)-1].Dollars, "the end is recorded whatever the throttle")
	for i := 1; i < len(points); i++ {
		assert.GreaterOrEqual(t, points[i].Seconds, points[i-1].Seconds)
	}
	assert.NotPanics(t, func() { NewSpendTrace(budget).Wrap(nil)(Progress{}) }, "no next")
}
