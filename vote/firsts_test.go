package vote

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWinnerIsItsKeysFirstValue: the winner is the value of the winning
// key's first committed vote, whether that key was the first, second or a
// later one to vote.
func TestWinnerIsItsKeysFirstValue(t *testing.T) {
	for _, rivalsBefore := range []int{0, 1, 2, 3, 5} {
		// rivalsBefore keys vote once each, then the winner's key votes
		// K times with a new value each time.
		var keys []uint64
		for r := range rivalsBefore {
			keys = append(keys, uint64(100+r))
		}
		for range 3 + 1 {
			keys = append(keys, 7)
		}
		draw := func(_ context.Context, i int) Sample[string] {
			if i >= len(keys) {
				return Sample[string]{Key: 999, Value: "never"}
			}
			return Sample[string]{Key: keys[i], Value: fmt.Sprintf("value of sample %d", i)}
		}
		want := fmt.Sprintf("value of sample %d", rivalsBefore)
		for name, race := range map[string]func(context.Context, Config, Drawer[string]) (Result[string], error){"Race": Race[string]} {
			res, err := race(context.Background(), Config{K: 2}, draw)
			require.NoError(t, err, "%s, %d rivals", name, rivalsBefore)
			assert.Equal(t, uint64(7), res.Key, "%s, %d rivals", name, rivalsBefore)
			assert.Equal(t, want, res.Winner, "%s, %d rivals", name, rivalsBefore)
		}
	}
}
