package mcpserver_test

import (
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultStateDirFollowsXDG(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/srv/state")
	assert.Equal(t, filepath.Join("/srv/state", "mdap", "journals"), mcpserver.DefaultStateDir())
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/ada")
	assert.Equal(t, filepath.Join("/home/ada", ".local", "state", "mdap", "journals"), mcpserver.DefaultStateDir())
}

// TestNewTokenIs256RandomBits: 64 hex digits, never the same twice.
func TestNewTokenIs256RandomBits(t *testing.T) {
	t.Parallel()
	a, err := mcpserver.NewToken()
	require.NoError(t, err)
	b, err := mcpserver.NewToken()
	require.NoError(t, err)
	raw, err := hex.DecodeString(a)
	require.NoError(t, err)
	assert.Len(t, raw, 32)
	assert.NotEqual(t, a, b)
}
