package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mdap-go/mdap/benchmarks"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/budget"
)

// spendEvery is the least time between two points of the spend chart.
const spendEvery = 50 * time.Millisecond

// spendRecorder keeps the points of maker solve --spend-chart: what the
// batch's budget counts as spent (earlier runs included), at most every
// spendEvery, from the run's start to its end.
type spendRecorder struct {
	budget *budget.Budget
	start  time.Time

	mu     sync.Mutex
	points []benchmarks.SpendPoint
	last   time.Time
}

func newSpendRecorder(b *budget.Budget) *spendRecorder {
	return &spendRecorder{budget: b, start: time.Now()}
}

// wrap returns a Progress callback that records a point, then calls next.
func (s *spendRecorder) wrap(next func(batch.Progress)) func(batch.Progress) {
	return func(p batch.Progress) {
		s.record(false)
		if next != nil {
			next(p)
		}
	}
}

func (s *spendRecorder) record(final bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if !final && len(s.points) > 0 && now.Sub(s.last) < spendEvery {
		return
	}
	s.last = now
	s.points = append(s.points, benchmarks.SpendPoint{Seconds: now.Sub(s.start).Seconds(), Dollars: s.budget.Spent()})
}

// write records the last point and writes the chart to path.
func (s *spendRecorder) write(path, tasks string, capUSD float64) error {
	s.record(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	svg, err := benchmarks.SpendChart(s.points, capUSD, fmt.Sprintf("maker solve %s: the batch's spend", tasks))
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		return fmt.Errorf("--spend-chart: %w", err)
	}
	return nil
}
