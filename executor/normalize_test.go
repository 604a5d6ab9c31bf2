//go:build unix

package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNormalizeIsPure: Normalize runs no tool, logs nothing, and shares
// no slice with its input.
func TestNormalizeIsPure(t *testing.T) {
	var runs atomic.Int32
	var logs bytes.Buffer
	counter := NewTool("counter", categories.TaskManager, "", json.RawMessage(`{"type":"object","properties":{"l":{"type":"array"}}}`),
		func(context.Context, map[string]any) (string, error) { runs.Add(1); return "", nil })
	e := newExec(t, WithTools(counter), WithPolicy(categories.Policy{Allow: []string{"counter"}}),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	logs.Reset()
	list := []any{"a", map[string]any{"k": "v"}}
	out, err := e.Normalize(intent.ToolIntent{Tool: "counter", Args: map[string]any{"l": list}})
	require.NoError(t, err)
	_, err = e.Normalize(intent.ToolIntent{Tool: "counter", Args: map[string]any{"l": 1}})
	require.ErrorIs(t, err, ErrInvalidArgs)
	_, _ = e.Normalize(intent.ToolIntent{Tool: "nope"})
	assert.Zero(t, runs.Load(), "nothing runs")
	assert.Empty(t, logs.String(), "nothing is logged")
	out.Args["l"].([]any)[0] = "changed"
	out.Args["l"].([]any)[1].(map[string]any)["k"] = "changed"
	assert.Equal(t, []any{"a", map[string]any{"k": "v"}}, list)
}
