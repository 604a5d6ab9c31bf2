package mcpserver_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewWarnsOfJournalsATaskCouldChange checks New's warning: a State
// folder at or inside Root, under a policy that lets a side-effect tool
// run, and only then.
func TestNewWarnsOfJournalsATaskCouldChange(t *testing.T) {
	t.Parallel()
	writes, err := selection.Parse(categories.Builtin(), "read_only,file_write")
	require.NoError(t, err)
	reads := categories.DefaultPolicy()
	root := t.TempDir()
	for _, c := range []struct {
		name   string
		state  string
		policy *categories.Policy
		warn   bool
	}{
		{"inside, writes", filepath.Join(root, "journals"), &writes, true},
		{"the root itself, writes", root, &writes, true},
		{"inside, read-only", filepath.Join(root, "journals"), &reads, false},
		{"inside, default policy", filepath.Join(root, "journals"), nil, false},
		{"outside, writes", t.TempDir(), &writes, false},
		{"a sibling whose name starts like the root", root + "-state", &writes, false},
	} {
		var logs bytes.Buffer
		s, err := mcpserver.New(mcpserver.Config{Root: root, State: c.state, Policy: c.policy,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		require.NoError(t, err, c.name)
		s.Close()
		if c.warn {
			assert.Contains(t, logs.String(), "a task could change its journals", c.name)
			assert.Contains(t, logs.String(), "level=WARN", c.name)
		} else {
			assert.NotContains(t, logs.String(), "journals", c.name)
		}
	}
}
