package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBinaryToolsShowsArguments(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "tools", "--root", t.TempDir())
	require.Equal(t, 0, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	out := c.stdout.String()
	for _, want := range []string{
		"\nread_file\n  path (string, required): file path relative to the root folder\n",
		"  paths (array of string): files or folders relative to the root folder",
		"\nwrite_file\n  content (string, required)",
		"\nlist_tool_categories\n  no arguments\n",
	} {
		assert.Contains(t, out, want)
	}

	c = start(t, nil, "tools", "--root", t.TempDir(), "--json")
	require.Equal(t, 0, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	var rep struct {
		Policy string `json:"policy"`
		Tools  []struct {
			Name      string `json:"name"`
			Arguments []struct {
				Name     string `json:"name"`
				Required bool   `json:"required"`
			} `json:"arguments"`
			Schema map[string]any `json:"schema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &rep))
	assert.NotEmpty(t, rep.Policy, "the inventory is still there")
	byName := map[string]int{}
	for i, tl := range rep.Tools {
		byName[tl.Name] = i
	}
	require.Contains(t, byName, "grep")
	g := rep.Tools[byName["grep"]]
	assert.Equal(t, "pattern", g.Arguments[0].Name)
	assert.True(t, g.Arguments[0].Required)
	assert.Equal(t, []any{"pattern"}, g.Schema["required"], "the JSON Schema itself")
	assert.Contains(t, g.Schema["properties"], "paths")
}
