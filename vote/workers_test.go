package vote

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkersReuseTheirGoroutines: draws handed to a Workers one after
// another run on the goroutine that ran the last one (an idle worker takes
// the next), so 200 races of 3 draws start about 3 goroutines, not 600;
// Close ends them all.
func TestWorkersReuseTheirGoroutines(t *testing.T) {
	before := goroutinesNow()
	w := new(Workers)
	var mu sync.Mutex
	ids := map[uint64]bool{}
	draw := func(_ context.Context, i int) Sample[int] {
		mu.Lock()
		ids[goid()] = true
		mu.Unlock()
		return Sample[int]{Value: i % 2, Key: 1}
	}
	for range 200 {
		_, err := Race(context.Background(), Config{K: 3, Workers: w}, draw)
		require.NoError(t, err)
	}
	mu.Lock()
	n := len(ids)
	mu.Unlock()
	assert.LessOrEqual(t, n, 6, "draws ran on %d goroutines; a race has 3 at once", n)
	w.Close()
	settle(t, before)
}

// TestWorkersChangeNoResult: a race's result, from a Drawer that draws each
// sample from its index, is the same with and without Workers, at every
// Parallel.
func TestWorkersChangeNoResult(t *testing.T) {
	draw := func(_ context.Context, i int) Sample[int] {
		h := hash3(7, 0, uint64(i))
		if unitFloat(h) < 0.3 {
			return Sample[int]{Value: 2, Key: 2}
		}
		return Sample[int]{Value: 1, Key: 1}
	}
	w := new(Workers)
	defer w.Close()
	for _, par := range []int{1, 3, 8} {
		want, err := Race(context.Background(), Config{K: 4, Parallel: par}, draw)
		require.NoError(t, err)
		got, err := Race(context.Background(), Config{K: 4, Parallel: par, Workers: w}, draw)
		require.NoError(t, err)
		assert.Equal(t, want.Key, got.Key, "Parallel %d", par)
		assert.Equal(t, want.Votes, got.Votes, "Parallel %d", par)
		assert.Equal(t, want.Launched, got.Launched, "Parallel %d", par)
	}
}

// TestWorkersCloseWaitsForTheBusy: Close returns only once a draw still
// running has returned.
func TestWorkersCloseWaitsForTheBusy(t *testing.T) {
	w := new(Workers)
	release := make(chan struct{})
	done := make(chan struct{})
	w.Go(func() { <-release; close(done) })
	closed := make(chan struct{})
	go func() { w.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a worker was busy")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-closed
	select {
	case <-done:
	default:
		t.Fatal("Close returned before the busy worker's f did")
	}
}

// goid is the calling goroutine's id, read from its stack header.
func goid() uint64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	var id uint64
	for _, c := range b[len("goroutine "):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
