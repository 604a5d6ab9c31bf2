// Package wait is mdap's one context-aware sleep.
package wait

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, whichever comes first, and returns
// ctx.Err() when the context ended the wait (also for d <= 0 on an ended
// context), nil otherwise. It holds one timer, stopped on return. Cost:
// O(1).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
