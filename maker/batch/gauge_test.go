package batch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRecordProgressSaysTasksByState: a Runner's progress is recorded as
// the gauge's states (invalid lines count as failed) before next sees it;
// without a recorder, next is as it was.
func TestRecordProgressSaysTasksByState(t *testing.T) {
	var got []int
	var seen Progress
	p := Progress{Tasks: 10, Done: 5, Running: 2, Solved: 3, Failed: 1, Invalid: 1}
	RecordProgress(func(queued, running, solved, failed int) { got = []int{queued, running, solved, failed} }, func(p Progress) { seen = p })(p)
	assert.Equal(t, []int{3, 2, 3, 2}, got)
	assert.Equal(t, p, seen)
	got = nil
	RecordProgress(func(queued, running, solved, failed int) { got = []int{queued} }, nil)(p) // no next
	assert.Equal(t, []int{3}, got)
	assert.Nil(t, RecordProgress(nil, nil))
}
