package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker/batch"
)

// Batch returns a batch.Runner's Progress drawing a bar of total tasks on
// w, with the steps, samples, step rate and cost so far (redrawn at most
// every 100 ms, and at the last task), and the function that ends it; nil
// and a no-op when m shows no bar on w.
func Batch(w io.Writer, m Mode, total int) (func(batch.Progress), func()) {
	bar := NewBar(w, m, total, "tasks")
	if bar == nil {
		return nil, func() {}
	}
	start := time.Now()
	var mu sync.Mutex
	var last time.Time
	return func(p batch.Progress) {
			mu.Lock()
			defer mu.Unlock()
			if now := time.Now(); now.Sub(last) >= 100*time.Millisecond || p.Done == total {
				last = now
				rate := float64(p.Steps) / max(now.Sub(start).Seconds(), 1e-3)
				bar.Describe(fmt.Sprintf("tasks (steps %d, samples %d, %.0f steps/s, $%.4f)", p.Steps, p.Samples, rate, p.Cost))
				_ = bar.Set(p.Done)
			}
		}, func() {
			_ = bar.Finish()
		}
}
