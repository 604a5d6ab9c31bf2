//go:build unix

package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHugeNameIsCutEverywhere: a cancelled call echoes no huge name either.
func TestHugeNameIsCutEverywhere(t *testing.T) {
	e := newExec(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs, err := e.Execute(ctx, intent.ToolIntent{Tool: strings.Repeat("n", 1<<20)})
	require.ErrorIs(t, err, context.Canceled)
	assert.LessOrEqual(t, len(obs.Tool), MaxToolNameBytes+len("…"))
	assert.Less(t, len(err.Error()), 2*MaxToolNameBytes)
}
