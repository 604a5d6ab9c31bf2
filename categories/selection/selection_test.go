package selection_test

import (
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDenyCategoryBeatsAllow(t *testing.T) {
	tax := categories.Builtin()
	p, err := selection.Parse(tax, "read_only,-search,grep")
	require.NoError(t, err)
	assert.Equal(t, []categories.Category{categories.Search}, p.DenyCategories)
	assert.Empty(t, p.Deny, "a denied category is not expanded into tool names")
	assert.Equal(t, []categories.Category{categories.FileRead, categories.SemanticSearch}, p.AllowedCategories())
	assert.False(t, p.AllowsCategory(categories.Search))
	grep, _ := tax.Lookup("grep")
	err = p.Allows(grep)
	require.ErrorIs(t, err, categories.ErrDenied, "deny by category beats allow by name")
	assert.Contains(t, err.Error(), "-search")
}

func TestDeniedCategoryCoversToolsAddedLater(t *testing.T) {
	tax := categories.Builtin()
	p, err := selection.Parse(tax, "read_only,-search")
	require.NoError(t, err)
	require.NoError(t, tax.Add("ripgrep", categories.Search))
	e, ok := tax.Lookup("ripgrep")
	require.True(t, ok)
	assert.ErrorIs(t, p.Allows(e), categories.ErrDenied, "a search tool registered after parsing is denied")
	rd, _ := tax.Lookup("read_file")
	assert.NoError(t, p.Allows(rd))
}

func TestParseSelection(t *testing.T) {
	tax := categories.Builtin()
	cases := []struct {
		in      string
		allowed []string
		denied  []string
	}{
		{"", []string{"read_file", "grep", "embedding_search"}, []string{"write_file"}},
		{"file_read,search,grep", []string{"read_file", "grep", "glob"}, []string{"embedding_search", "write_file"}},
		{"grep", []string{"grep"}, []string{"read_file", "glob"}},
		{"file_write", []string{"write_file", "edit_file"}, []string{"read_file"}},
		{"read_only,write_file", []string{"read_file", "write_file", "grep"}, []string{"edit_file", "run_command"}},
		{"read_only,-grep", []string{"glob"}, []string{"grep"}},
		{"read_only,-search", []string{"read_file"}, []string{"grep", "glob"}},
		{"none", nil, []string{"read_file", "grep"}},
		{" file_read , , git ", []string{"list_dir", "git_command"}, []string{"grep"}},
	}
	for _, c := range cases {
		p, err := selection.Parse(tax, c.in)
		require.NoError(t, err, c.in)
		for _, n := range c.allowed {
			e, _ := tax.Lookup(n)
			assert.NoError(t, p.Allows(e), "%q should allow %s", c.in, n)
		}
		for _, n := range c.denied {
			e, _ := tax.Lookup(n)
			assert.ErrorIs(t, p.Allows(e), categories.ErrDenied, "%q should deny %s", c.in, n)
		}
		// String round-trips.
		back, err := selection.Parse(tax, p.String())
		require.NoError(t, err, p.String())
		for _, e := range tax.Tools() {
			assert.Equal(t, p.Allows(e) == nil, back.Allows(e) == nil, "%q -> %q: %s", c.in, p.String(), e.Name)
		}
	}
}

func TestParseSelectionErrors(t *testing.T) {
	tax := categories.Builtin()
	_, err := selection.Parse(tax, "file_read,shell")
	require.ErrorIs(t, err, categories.ErrUnknownName)
	for _, want := range []string{`"shell"`, "file_read", "grep", "write_file", "read_only"} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = selection.Parse(tax, "-"+categories.IndexTool)
	assert.ErrorIs(t, err, categories.ErrReservedName)
	none, err := selection.Parse(tax, "none")
	require.NoError(t, err)
	assert.Equal(t, categories.Policy{}, none, "nothing but the index tool")
}
