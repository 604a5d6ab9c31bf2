package fstools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegister(t *testing.T) {
	e := newExec(t, "")
	assert.Empty(t, e.Registered(), "no root, no file tools")

	require.NoError(t, e.Register(echoTool("echo", categories.TaskManager)))
	en, ok := e.Taxonomy().Lookup("echo")
	require.True(t, ok, "an unknown tool is added to the taxonomy")
	assert.Equal(t, categories.TaskManager, en.Category)
	assert.Equal(t, []string{"echo"}, e.Registered())

	err := e.Register(echoTool("echo", categories.TaskManager))
	assert.ErrorIs(t, err, executor.ErrDuplicateTool, "twice")

	err = e.Register(echoTool("grep", categories.FileWrite))
	assert.ErrorIs(t, err, executor.ErrDuplicateTool, "the taxonomy has grep in search")
	assert.Contains(t, err.Error(), "search")

	require.NoError(t, e.Register(echoTool("fetch_url", categories.Web)), "a known name in its own category")
	assert.False(t, e.ReadOnly("fetch_url"))

	for name, tool := range map[string]executor.Tool{
		"nil":            nil,
		"index name":     echoTool(categories.IndexTool, categories.FileRead),
		"category name":  echoTool("bash", categories.Bash),
		"space":          echoTool("two words", categories.Web),
		"empty":          echoTool("", categories.Web),
		"bad category":   echoTool("thing", categories.Category("teleport")),
		"empty category": echoTool("thing", ""),
	} {
		assert.ErrorIs(t, e.Register(tool), executor.ErrInvalidTool, name)
	}
	assert.ErrorIs(t, e.Register(echoTool("bash", categories.Bash)), categories.ErrReservedName)
	_, known := e.Taxonomy().Lookup("thing")
	assert.False(t, known, "a refused tool leaves the taxonomy alone")

	for name, schema := range map[string]string{
		"not json":     `{"type":`,
		"not a schema": `{"type": 5}`,
		"array":        `["object"]`,
		"empty":        ``,
		"external ref": `{"$ref": "https://example.com/schema.json"}`,
		"file ref":     `{"$ref": "file:///etc/passwd"}`,
	} {
		tool := executor.NewTool("schema_"+strings.ReplaceAll(name, " ", "_"), categories.Web, "", json.RawMessage(schema), nil)
		err := e.Register(tool)
		assert.ErrorIs(t, err, executor.ErrInvalidSchema, name)
		_, known := e.Taxonomy().Lookup(tool.Name())
		assert.False(t, known, "%s: not added to the taxonomy", name)
	}

	require.NoError(t, e.Register(mcpTool{echoTool("mcp_lookup", categories.MCP), true}))
	require.NoError(t, e.Register(mcpTool{echoTool("mcp_change", categories.MCP), false}))
	assert.True(t, e.ReadOnly("mcp_lookup"), "declared read-only by its server")
	assert.False(t, e.ReadOnly("mcp_change"))
}

func TestNewErrors(t *testing.T) {
	_, err := New(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, executor.ErrInvalidRoot)

	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, writeFile(file, "x"))
	_, err = New(file)
	assert.ErrorIs(t, err, executor.ErrInvalidRoot)

	tax := &categories.Taxonomy{}
	require.NoError(t, tax.Add("read_file", categories.FileWrite))
	_, err = New(t.TempDir(), executor.WithTaxonomy(tax))
	assert.ErrorIs(t, err, executor.ErrDuplicateTool, "a taxonomy that places read_file elsewhere")

	_, err = executor.New(executor.WithTools(echoTool("echo", categories.Web), echoTool("echo", categories.Web)))
	assert.ErrorIs(t, err, executor.ErrDuplicateTool)
}

func TestReadOnlyLookupAndCheck(t *testing.T) {
	var runs atomic.Int32
	count := executor.NewTool("counter", categories.TaskManager, "", json.RawMessage(objSchema), func(context.Context, map[string]any) (string, error) {
		runs.Add(1)
		return "", nil
	})
	e := newExec(t, t.TempDir(), executor.WithTools(count), executor.WithPolicy(categories.Policy{Allow: []string{"counter"}}))
	for name, want := range map[string]bool{
		"read_file": true, "list_dir": true, "glob": true, "grep": true, categories.IndexTool: true,
		"write_file": false, "counter": false, "run_command": false, "nope": false,
	} {
		assert.Equal(t, want, e.ReadOnly(name), name)
	}
	en, ok := e.Lookup("grep")
	assert.True(t, ok)
	assert.Equal(t, categories.Search, en.Category)
	_, ok = e.Lookup("run_command")
	assert.False(t, ok, "in the taxonomy, not registered")
	en, ok = e.Lookup(categories.IndexTool)
	assert.True(t, ok)
	assert.Empty(t, en.Category)

	obs, ok := e.Check(intent.ToolIntent{Tool: "counter", Args: map[string]any{"text": "x"}})
	assert.True(t, ok)
	assert.Equal(t, intent.StatusOK, obs.Status)
	assert.Equal(t, categories.TaskManager, obs.Category)
	assert.Zero(t, runs.Load(), "Check runs nothing")

	obs, ok = e.Check(intent.ToolIntent{Tool: "counter", Args: map[string]any{"text": 1}})
	assert.False(t, ok)
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	obs, ok = e.Check(intent.ToolIntent{Tool: "write_file", Args: map[string]any{"path": "x", "content": ""}})
	assert.False(t, ok)
	assert.Equal(t, intent.ReasonNotAllowed, obs.Reason)
	assert.Zero(t, runs.Load())
}

func TestIndexToolCannotBeWithheld(t *testing.T) {
	for name, p := range map[string]categories.Policy{
		"none":      {},
		"deny it":   {Categories: categories.ReadOnly(), Deny: []string{categories.IndexTool}},
		"read-only": categories.DefaultPolicy(),
	} {
		t.Run(name, func(t *testing.T) {
			e := newExec(t, t.TempDir(), executor.WithPolicy(p))
			obs := run(t, e, categories.IndexTool, nil)
			require.True(t, obs.OK(), obs.Content)
			assert.True(t, obs.ReadOnly)
			assert.Empty(t, obs.Category)
			var rep categories.Inventory
			require.NoError(t, json.Unmarshal([]byte(obs.Content), &rep))
			assert.Equal(t, e.Inventory(), rep, "the index tool returns Inventory")
			states := map[string]categories.State{}
			for _, c := range rep.Categories {
				for _, tl := range c.Tools {
					states[tl.Name] = tl.State
				}
			}
			assert.Equal(t, categories.ToolWithheld, states["write_file"])
			assert.Equal(t, categories.ToolUnavailable, states["run_command"], "not registered here")
			assert.Equal(t, categories.ToolUnavailable, states["edit_file"])
			if name == "none" {
				assert.Equal(t, categories.ToolWithheld, states["read_file"])
				assert.Equal(t, intent.ReasonNotAllowed, run(t, e, "read_file", map[string]any{"path": "x"}).Reason)
			} else {
				assert.Equal(t, categories.ToolLoaded, states["read_file"])
			}
			// Any arguments are accepted.
			assert.True(t, run(t, e, categories.IndexTool, map[string]any{"verbose": true}).OK())
		})
	}
}

func TestObservationTextErrAndJSON(t *testing.T) {
	ok := intent.Observation{Tool: "read_file", Status: intent.StatusOK, Content: "hi", Duration: time.Second}
	assert.Equal(t, "Tool \"read_file\" returned:\nhi", ok.Text())
	assert.Equal(t, `Tool "x" returned no output.`, intent.Observation{Tool: "x", Status: intent.StatusOK}.Text())

	denied := intent.Observation{Tool: "write_file", Status: intent.StatusDenied, Reason: intent.ReasonNotAllowed, Content: "not allowed"}
	assert.Equal(t, `Tool call "write_file" was denied (not_allowed): not allowed`, denied.Text())
	failed := intent.Observation{Tool: "grep", Status: intent.StatusError, Reason: intent.ReasonTimeout, Content: "slow"}
	assert.Equal(t, `Tool call "grep" failed (timeout): slow`, failed.Text())

	b, err := json.Marshal(denied)
	require.NoError(t, err)
	assert.JSONEq(t, `{"tool":"write_file","read_only":false,"status":"denied","reason":"not_allowed","content":"not allowed","duration_ns":0}`, string(b))
	var back intent.Observation
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, denied, back)
}

func TestConcurrentUse(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "a.txt"), "a\n"))
	e := newExec(t, root)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 4 {
			case 0:
				obs, err := e.Execute(context.Background(), intent.ToolIntent{Tool: "read_file", Args: map[string]any{"path": "a.txt"}})
				assert.NoError(t, err)
				assert.Equal(t, "a\n", obs.Content)
			case 1:
				assert.NoError(t, e.Register(echoTool(fmt.Sprintf("echo_%d", i), categories.TaskManager)))
			case 2:
				_ = e.Loaded()
				_, _ = e.ToolSchema("read_file")
				_, _ = e.Execute(context.Background(), intent.ToolIntent{Tool: categories.IndexTool})
			case 3:
				_, _ = e.Check(intent.ToolIntent{Tool: "grep", Args: map[string]any{"pattern": "a"}})
			}
		}()
	}
	wg.Wait()
}

func TestPolicyDefaultsToReadOnly(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "a.txt"), "a\n"))
	e := newExec(t, root)
	assert.Equal(t, categories.DefaultPolicy(), e.Policy(), "New without WithPolicy is read-only")
	assert.True(t, run(t, e, "read_file", map[string]any{"path": "a.txt"}).OK())
	assert.Equal(t, intent.ReasonNotAllowed, run(t, e, "write_file", map[string]any{"path": "b.txt", "content": "x"}).Reason)

	none := newExec(t, root, executor.WithPolicy(categories.Policy{}))
	assert.Equal(t, intent.ReasonNotAllowed, run(t, none, "read_file", map[string]any{"path": "a.txt"}).Reason,
		"the zero policy allows nothing but the index tool")
	assert.True(t, run(t, none, categories.IndexTool, nil).OK())
	assert.Equal(t, []string{categories.IndexTool}, none.Loaded())
}
