package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKMinText: the text maker kmin prints says the inputs and k_min,
// and the cost only when a price was given.
func TestKMinText(t *testing.T) {
	out, err := mcpserver.KMin(mcpserver.KMinInput{Steps: 1000, P: 0.99})
	require.NoError(t, err)
	var b strings.Builder
	out.WriteText(&b)
	assert.Contains(t, b.String(), "steps 1000, p 0.99, target 0.95, valid rate 1\n")
	assert.Regexp(t, `(?m)^k_min +\d+$`, b.String())
	assert.NotContains(t, b.String(), "cost")
	out, err = mcpserver.KMin(mcpserver.KMinInput{Steps: 1000, P: 0.99, Price: 0.5})
	require.NoError(t, err)
	b.Reset()
	out.WriteText(&b)
	assert.Contains(t, b.String(), "cost             ")
}
