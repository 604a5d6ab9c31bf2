package executor

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// args is a call's arguments, as a model gives them.
type args = map[string]any

func newExec(t testing.TB, opts ...Option) *Executor {
	t.Helper()
	e, err := New(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	return e
}

func run(t *testing.T, e *Executor, tool string, args map[string]any) intent.Observation {
	t.Helper()
	obs, err := e.Execute(context.Background(), intent.ToolIntent{Tool: tool, Args: args})
	require.NoError(t, err)
	return obs
}
