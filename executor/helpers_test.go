package executor

import (
	"context"
	"os"
	"testing"

	"github.com/mdap-go/mdap/categories"
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

func rwPolicy() categories.Policy {
	return categories.Policy{Categories: []categories.Category{categories.FileRead, categories.Search, categories.FileWrite}}
}

func run(t *testing.T, e *Executor, tool string, args map[string]any) intent.Observation {
	t.Helper()
	obs, err := e.Execute(context.Background(), intent.ToolIntent{Tool: tool, Args: args})
	require.NoError(t, err)
	return obs
}

func writeFile(p, content string) error { return os.WriteFile(p, []byte(content), 0o644) }
