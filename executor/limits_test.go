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

// TestTooDeepAtTheBoundary: arguments nested exactly MaxArgsDepth deep
// (the arguments object itself one level) pass, one level more is
// refused, through arrays and objects alike.
func TestTooDeepAtTheBoundary(t *testing.T) {
	nest := func(levels int, wrap func(any) any) any {
		var v any = "x"
		for range levels {
			v = wrap(v)
		}
		return v
	}
	inArray := func(v any) any { return []any{v} }
	inObject := func(v any) any { return map[string]any{"a": v} }
	for name, wrap := range map[string]func(any) any{"arrays": inArray, "objects": inObject} {
		if tooDeep(nest(MaxArgsDepth, wrap), MaxArgsDepth) {
			t.Errorf("%s: %d levels refused, want accepted", name, MaxArgsDepth)
		}
		if !tooDeep(nest(MaxArgsDepth+1, wrap), MaxArgsDepth) {
			t.Errorf("%s: %d levels accepted, want refused", name, MaxArgsDepth+1)
		}
	}
	// An empty container is a level too: one past the limit is refused,
	// as a full one is.
	for name, empty := range map[string]any{"array": []any{}, "object": map[string]any{}} {
		if !tooDeep(empty, 0) {
			t.Errorf("an empty %s with no level left accepted, want refused", name)
		}
		if tooDeep(empty, 1) {
			t.Errorf("an empty %s at the last level refused, want accepted", name)
		}
	}
}
