package mono

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestNowMeasuresElapsedTime: Since a reading measures what time.Since of
// a time.Now taken at the same moment measures, within the moments
// between the reads, and readings never decrease.
func TestNowMeasuresElapsedTime(t *testing.T) {
	outerStart := time.Now()
	start := Now()
	innerStart := time.Now()
	time.Sleep(20 * time.Millisecond)
	inner := time.Since(innerStart)
	got := Since(start)
	outer := time.Since(outerStart)
	assert.GreaterOrEqual(t, got, inner)
	assert.LessOrEqual(t, got, outer)
	assert.GreaterOrEqual(t, got, 20*time.Millisecond)

	last := Now()
	for range 1000 {
		n := Now()
		assert.GreaterOrEqual(t, n, last)
		last = n
	}
}

// TestNowDoesNotAllocate: the loop reads it per sample.
func TestNowDoesNotAllocate(t *testing.T) {
	var d time.Duration
	assert.Zero(t, testing.AllocsPerRun(100, func() { d += Since(Now()) }))
}
