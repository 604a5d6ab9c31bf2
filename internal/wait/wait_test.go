package wait

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSleepWaitsTheWholeDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		assert.NoError(t, Sleep(t.Context(), 3*time.Second))
		assert.Equal(t, 3*time.Second, time.Since(start))
	})
}

func TestSleepEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		assert.ErrorIs(t, Sleep(ctx, time.Hour), context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))
	})
}

func TestSleepZeroReportsAnEndedContext(t *testing.T) {
	assert.NoError(t, Sleep(t.Context(), 0))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, Sleep(ctx, -time.Second), context.Canceled)
	assert.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled)
}
