package progress

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSuitesIsSafeForConcurrentUse: the package doc's promise for Suites,
// in both of its displays (lines and bars), under the race detector.
func TestSuitesIsSafeForConcurrentUse(t *testing.T) {
	for _, m := range []Mode{Auto, On} {
		var w syncBuffer
		set, finish := Suites(&w, m)
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() { set("suite"+string(rune('a'+i%2)), i%3, 3) })
		}
		wg.Wait()
		finish()
		if m == Auto { // not a terminal: a line per call
			assert.Equal(t, 16, strings.Count(w.String(), "bench: suite"), w.String())
		}
	}
}
