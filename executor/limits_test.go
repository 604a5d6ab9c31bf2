//go:build unix

package executor

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadFileHugeLimit: a limit near the int range used to overflow an
// index and end as a panic observation.
func TestReadFileHugeLimit(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	for _, limit := range []any{math.MaxInt64, json.Number("9223372036854775807"), json.Number("1e30"), 1 << 40} {
		obs := run(t, e, "read_file", args{"path": "hello.txt", "offset": 2, "limit": limit})
		assert.Equal(t, intent.StatusDenied, obs.Status, "%v: %s", limit, obs.Content)
		assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, "%v: %s", limit, obs.Content)
		assert.Contains(t, obs.Content, "arguments.limit: maximum", "%v", limit)
	}
	obs := run(t, e, "read_file", args{"path": "hello.txt", "offset": 1_000_000_000, "limit": 1_000_000})
	assert.True(t, obs.OK(), obs.Content)
	assert.Contains(t, obs.Content, "past the end")
	obs = run(t, e, "read_file", args{"path": "hello.txt", "offset": 1_000_000_001})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)

	// The tool itself does not overflow, whatever reaches it.
	rf := e.lookup("read_file").tool
	huge := json.Number("9223372036854775807")
	out, err := rf.Run(context.Background(), args{"path": "hello.txt", "offset": json.Number("2"), "limit": huge})
	require.NoError(t, err)
	assert.Equal(t, "world\n", out)
	out, err = rf.Run(context.Background(), args{"path": "hello.txt", "offset": huge, "limit": huge})
	require.NoError(t, err)
	assert.Contains(t, out, "past the end")
}
