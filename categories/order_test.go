package categories

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolsOrderedByCategoryThenName: Tools lists tools by category in
// All's order, then by name, whatever the order they were added in and
// whatever their names' order across categories (kills the mutants of the
// comparison in Tools that gremlins found alive: a + for the -, and the
// tie test negated).
func TestToolsOrderedByCategoryThenName(t *testing.T) {
	var tax Taxonomy
	require.NoError(t, tax.AddMCP("a_mcp", false))      // last category, first name
	require.NoError(t, tax.Add("z_write", FileWrite))   // a middle category
	require.NoError(t, tax.Add("y_read", FileRead))     // the first category, late name
	require.NoError(t, tax.Add("b_read", FileRead))     // the same category, earlier name
	require.NoError(t, tax.Add("m_search", Search))     // the second category
	require.NoError(t, tax.Add("c_bash", Bash))         // after file_write
	require.NoError(t, tax.Add("x_read_too", FileRead)) // between b_ and y_
	var got []string
	for _, e := range tax.Tools() {
		got = append(got, string(e.Category)+"/"+e.Name)
	}
	assert.Equal(t, []string{"file_read/b_read", "file_read/x_read_too", "file_read/y_read", "search/m_search",
		"file_write/z_write", "bash/c_bash", "mcp/a_mcp"}, got)
}

// TestInventoryNoteSpacing: the note's glossary entries are separated by
// exactly one space, with none doubled (kills the mutants of its
// separator's condition).
func TestInventoryNoteSpacing(t *testing.T) {
	n := Builtin().Inventory(Policy{}, nil).Note
	require.True(t, strings.HasPrefix(n, "States. "+glossary[0].of+" "), n)
	assert.NotContains(t, n, "  ")
	for i := 1; i < len(glossary); i++ {
		assert.Contains(t, n, glossary[i-1].meaning+". "+glossary[i].of+" "+string(glossary[i].state)+":")
	}
}
