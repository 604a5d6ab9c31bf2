package batch

import (
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker/budget"
)

// SpendEvery is the least time between two points a SpendTrace records
// while the batch goes on; End's last point is recorded however close.
const SpendEvery = 50 * time.Millisecond

// SpendPoint is a batch's spend at a moment of a run.
type SpendPoint struct {
	// Seconds since the run started.
	Seconds float64
	// Dollars the batch's budget counts as spent, earlier runs included.
	Dollars float64
}

// SpendTrace records a batch's spend over a run (maker solve
// --spend-chart): what its budget counts as spent, earlier runs
// included, at most every SpendEvery, from the run's start to its end.
// Its methods are safe for concurrent use.
type SpendTrace struct {
	budget *budget.Budget
	start  time.Time

	mu     sync.Mutex
	points []SpendPoint
	last   time.Time
}

// NewSpendTrace starts the trace of budget's spend now.
func NewSpendTrace(budget *budget.Budget) *SpendTrace {
	return &SpendTrace{budget: budget, start: time.Now()}
}

// Wrap returns a Runner's Progress that records a point, then calls next
// (if set).
func (s *SpendTrace) Wrap(next func(Progress)) func(Progress) {
	return func(p Progress) {
		s.record(false)
		if next != nil {
			next(p)
		}
	}
}

func (s *SpendTrace) record(final bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if !final && len(s.points) > 0 && now.Sub(s.last) < SpendEvery {
		return
	}
	s.last = now
	s.points = append(s.points, SpendPoint{Seconds: now.Sub(s.start).Seconds(), Dollars: s.budget.Spent()})
}

// End records the last point and returns every point, in time order.
func (s *SpendTrace) End() []SpendPoint {
	s.record(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SpendPoint(nil), s.points...)
}
