package mcpserver_test

import (
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigValidateNamesTheField checks that every refusal of
// Config.Validate names the field (what maker mcp maps to its flag), the
// value and the fix, and that New refuses the same.
func TestConfigValidateNamesTheField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg   mcpserver.Config
		field string
		value any
	}{
		{mcpserver.Config{Models: []string{"sim", "gpt"}}, "Models[1]", "gpt"},
		{mcpserver.Config{BaseURL: "ftp://x"}, "BaseURL", "ftp://x"},
		{mcpserver.Config{ToolDeclaration: "loud"}, "ToolDeclaration", "loud"},
		{mcpserver.Config{Timeout: -time.Second}, "Timeout", -time.Second},
		{mcpserver.Config{MaxK: mcpserver.LimitMaxK + 1}, "MaxK", mcpserver.LimitMaxK + 1},
		{mcpserver.Config{MaxK: -1}, "MaxK", -1},
		{mcpserver.Config{MaxSamples: mcpserver.LimitMaxSamples + 1}, "MaxSamples", mcpserver.LimitMaxSamples + 1},
		{mcpserver.Config{MaxK: 3, MaxSamples: 2}, "MaxSamples", 2},
		{mcpserver.Config{MaxRequestBytes: mcpserver.MinRequestBytes - 1}, "MaxRequestBytes", int64(mcpserver.MinRequestBytes - 1)},
		{mcpserver.Config{MaxRequestBytes: -1}, "MaxRequestBytes", int64(-1)},
		{mcpserver.Config{MaxSteps: -1}, "MaxSteps", -1},
		{mcpserver.Config{Root: "/no/such/folder"}, "Root", "/no/such/folder"},
		{mcpserver.Config{Sim: sim.Config{P: 2}}, "P", 2.0},
	} {
		err := c.cfg.Validate()
		var fe *maker.FieldError
		require.ErrorAs(t, err, &fe, "%+v", c.cfg)
		require.ErrorIs(t, err, mcpserver.ErrConfig)
		require.Len(t, fe.Fields, 1, "%v", err)
		assert.Equal(t, c.field, fe.Fields[0].Name, "%v", err)
		assert.Equal(t, c.value, fe.Fields[0].Value, "%v", err)
		assert.NotEmpty(t, fe.Remedy(), "%v", err)
		_, nerr := mcpserver.New(c.cfg)
		assert.ErrorAs(t, nerr, &fe, "New refuses what Validate refuses: %+v", c.cfg)
	}
	err := mcpserver.Config{Models: []string{"gpt"}}.Validate()
	assert.ErrorIs(t, err, models.ErrSpec, "the spec parser's error is still found")
	assert.Contains(t, err.Error(), "mcpserver.Config: Models[0] = gpt", "the error says where it comes from")
	// The edges that are allowed, and the zero value.
	for _, cfg := range []mcpserver.Config{
		{},
		{MaxK: mcpserver.LimitMaxK, MaxSamples: mcpserver.LimitMaxK},
		{MaxK: mcpserver.LimitMaxK}, // MaxSamples defaults to DefaultMaxSamples, at least LimitMaxK
		{MaxRequestBytes: mcpserver.MinRequestBytes},
		{MaxRequestBytes: mcpserver.LimitMaxRequestBytes},
		{Root: t.TempDir(), Timeout: time.Second, ToolDeclaration: maker.DeclarePrompt},
	} {
		assert.NoError(t, cfg.Validate(), "%+v", cfg)
	}
}
