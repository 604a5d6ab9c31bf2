//go:build unix

package fstools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxUnderSymlinkSwaps runs the file tools in a loop while another
// goroutine swaps a folder inside the root with a symbolic link to a
// folder outside it (relative, then absolute) and back, many times. No
// read may return outside content and no write may land outside.
func TestSandboxUnderSymlinkSwaps(t *testing.T) {
	f := newFixture(t)
	d, real := filepath.Join(f.root, "d"), filepath.Join(f.root, "d.real")
	require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
	require.NoError(t, writeFile(filepath.Join(d, "f.txt"), "inside\n"))
	require.NoError(t, writeFile(filepath.Join(d, "sub", "f.txt"), "inside\n"))
	require.NoError(t, writeFile(filepath.Join(f.outside, "f.txt"), secret))
	require.NoError(t, os.MkdirAll(filepath.Join(f.outside, "sub"), 0o755))
	require.NoError(t, writeFile(filepath.Join(f.outside, "sub", "f.txt"), secret))
	outsideBefore := snapshot(t, f.outside)
	e := newExec(t, f.root, executor.WithPolicy(rwPolicy()))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stop atomic.Bool
	var swaps, calls atomic.Int64
	var wg sync.WaitGroup
	// retry runs op until it succeeds: a write with create_dirs may make a
	// new d whenever d is missing, which is removed (it is inside the
	// root) before trying again.
	retry := func(op func() error) bool {
		for range 100 {
			if err := op(); err == nil {
				return true
			}
			_ = os.RemoveAll(d)
		}
		return false
	}
	wg.Go(func() {
		targets := []string{"../outside", f.outside}
		for i := 0; !stop.Load() && ctx.Err() == nil; i++ {
			ok := retry(func() error { return os.Rename(d, real) }) &&
				retry(func() error { return os.Symlink(targets[i%2], d) }) &&
				retry(func() error { return os.Remove(d) }) &&
				retry(func() error { return os.Rename(real, d) })
			if !ok {
				assert.Failf(t, "swap failed", "swap %d", i)
				return
			}
			swaps.Add(1)
		}
	})
	calls4 := []intent.ToolIntent{
		{Tool: "read_file", Args: args{"path": "d/f.txt"}},
		{Tool: "read_file", Args: args{"path": "d/sub/f.txt"}},
		{Tool: "grep", Args: args{"pattern": "SECRET|inside", "paths": []any{"d"}}},
		{Tool: "grep", Args: args{"pattern": "SECRET|inside", "paths": []any{"d/f.txt", "d/sub"}}},
		{Tool: "list_dir", Args: args{"path": "d/sub"}},
		{Tool: "glob", Args: args{"pattern": "**", "path": "d"}},
	}
	for w := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load() && ctx.Err() == nil; i++ {
				in := calls4[(i+w)%len(calls4)]
				if w == 3 {
					in = intent.ToolIntent{Tool: "write_file", Args: args{"path": fmt.Sprintf("d/sub/w%d.txt", i%50), "content": "written", "create_dirs": i%2 == 0}}
				}
				obs, err := e.Execute(ctx, in)
				if err != nil {
					return
				}
				calls.Add(1)
				assert.NotContains(t, obs.Content, "TOP SECRET", "%s %v", in.Tool, in.Args)
				assert.NotEqual(t, intent.ReasonPanic, obs.Reason, obs.Content)
			}
		})
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && (swaps.Load() < 1000 || calls.Load() < 4000) {
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d swaps, %d calls", swaps.Load(), calls.Load())
	assert.Positive(t, swaps.Load())
	assert.Positive(t, calls.Load())
	assert.Equal(t, outsideBefore, snapshot(t, f.outside), "nothing outside the root changes")
	entries, err := os.ReadDir(f.outside)
	require.NoError(t, err)
	for _, en := range entries {
		assert.False(t, strings.HasPrefix(en.Name(), "w") || strings.Contains(en.Name(), ".tmp-"), "written outside: %s", en.Name())
	}
}
