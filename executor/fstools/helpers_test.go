package fstools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// args is a call's arguments, as a model gives them.
type args = map[string]any

const objSchema = `{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}`

func echoTool(name string, c categories.Category) executor.Tool {
	return executor.NewTool(name, c, "echoes text", json.RawMessage(objSchema), func(_ context.Context, args map[string]any) (string, error) {
		s, _ := args["text"].(string)
		return s, nil
	})
}

// newExec returns an executor with the file tools over root (none for
// root ""), opened with
// the fstools options among opts (WithReadCap, WithRefuseHardLinks) and
// built with the executor options among them.
func newExec(t testing.TB, root string, opts ...any) *executor.Executor {
	t.Helper()
	var fsOpts []Option
	var exOpts []executor.Option
	for _, o := range opts {
		switch o := o.(type) {
		case Option:
			fsOpts = append(fsOpts, o)
		case executor.Option:
			exOpts = append(exOpts, o)
		default:
			t.Fatalf("newExec: option of type %T", o)
		}
	}
	if root != "" {
		d, err := Open(root, fsOpts...)
		require.NoError(t, err)
		exOpts = append([]executor.Option{executor.WithWorkspace(d)}, exOpts...)
	}
	e, err := executor.New(exOpts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	return e
}

func rwPolicy() categories.Policy {
	return categories.Policy{Categories: []categories.Category{categories.FileRead, categories.Search, categories.FileWrite}}
}

func run(t *testing.T, e *executor.Executor, tool string, args map[string]any) intent.Observation {
	t.Helper()
	obs, err := e.Execute(context.Background(), intent.ToolIntent{Tool: tool, Args: args})
	require.NoError(t, err)
	return obs
}

func writeFile(p, content string) error { return os.WriteFile(p, []byte(content), 0o644) }

type mcpTool struct {
	executor.Tool
	ro bool
}

func (m mcpTool) DeclaredReadOnly() bool { return m.ro }

// noteSlack is room for the truncation note after capped content.
const noteSlack = 100

// sameObservation compares what Execute must keep equal: everything but
// Duration, and Healed (the healing happened in Normalize).
func sameObservation(t *testing.T, want, got intent.Observation, msg string) {
	t.Helper()
	want.Duration, got.Duration = 0, 0
	want.Healed, got.Healed = nil, nil
	assert.Equal(t, want, got, msg)
}

// fileTool returns the file tool of name over root, outside any executor.
func fileTool(t testing.TB, root, name string) executor.Tool {
	t.Helper()
	d, err := Open(root)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	for _, tl := range d.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	require.Failf(t, "no such file tool", "%q", name)
	return nil
}

// emptyFiles creates n empty files in dir, named f000000 onwards.
func emptyFiles(t *testing.T, dir string, n int) {
	t.Helper()
	// A few creators at once: the system calls run side by side on the
	// machine's cores.
	var g errgroup.Group
	const creators = 4
	for c := range creators {
		g.Go(func() error {
			for i := c; i < n; i += creators {
				f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%06d", i)))
				if err != nil {
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
}
