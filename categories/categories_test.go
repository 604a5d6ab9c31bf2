package categories

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryCategoryClassified(t *testing.T) {
	sideEffects := []Category{FileWrite, Bash, Git, Web, AgentPool, TaskManager, MCP}
	for _, c := range All() {
		ro, se := c.ReadOnly(), containsCat(sideEffects, c)
		assert.True(t, ro != se, "category %s must be read-only or side-effecting, exactly one", c)
	}
	assert.Equal(t, []Category{FileRead, Search, SemanticSearch}, ReadOnly())
	assert.Len(t, All(), 10)
	assert.False(t, Category("shell").ReadOnly())
	assert.False(t, Category("shell").Valid())
}

func containsCat(cs []Category, c Category) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func TestReturnedSlicesAreCopies(t *testing.T) {
	ro := ReadOnly()
	ro[0] = Bash
	assert.Equal(t, FileRead, ReadOnly()[0])
	a := All()
	a[0] = Bash
	assert.Equal(t, FileRead, All()[0])
}

func TestParseCategory(t *testing.T) {
	c, err := ParseCategory(" git ")
	require.NoError(t, err)
	assert.Equal(t, Git, c)
	_, err = ParseCategory("shell")
	require.ErrorIs(t, err, ErrUnknownName)
	assert.Contains(t, err.Error(), "file_read, search")
}

func TestBuiltinIsTotal(t *testing.T) {
	tax := Builtin()
	seen := map[string]bool{}
	for _, e := range tax.Tools() {
		assert.False(t, seen[e.Name], "tool %s twice", e.Name)
		seen[e.Name] = true
		assert.True(t, e.Category.Valid(), e.Name)
		assert.False(t, Category(e.Name).Valid(), "tool %s has a category's name", e.Name)
	}
	for _, c := range All() {
		if c == MCP {
			continue // MCP tools arrive at run time
		}
		n := 0
		for _, e := range tax.Tools() {
			if e.Category == c {
				n++
			}
		}
		assert.Positive(t, n, "category %s has no built-in tool", c)
	}
	// Each Builtin is a fresh taxonomy.
	require.NoError(t, tax.AddMCP("fresh_tool", false))
	_, ok := Builtin().Lookup("fresh_tool")
	assert.False(t, ok)
}

func TestTaxonomyRejects(t *testing.T) {
	var tax Taxonomy // the zero value is usable
	require.NoError(t, tax.Add("cat_file", FileRead))
	cases := []struct {
		name string
		cat  Category
		want error
	}{
		{"cat_file", FileRead, ErrDuplicate},
		{"cat_file", FileWrite, ErrDuplicate}, // two categories
		{"bash", Bash, ErrReservedName},       // a category's name
		{"file_write", FileRead, ErrReservedName},
		{IndexTool, FileRead, ErrReservedName},
		{"", FileRead, ErrReservedName},
		{"a,b", FileRead, ErrReservedName},
		{" padded", FileRead, ErrReservedName},
		{"x", Category("shell"), ErrUnknownName},
		{"x", Category(""), ErrUnknownName},
	}
	for _, c := range cases {
		err := tax.Add(c.name, c.cat)
		assert.ErrorIs(t, err, c.want, "Add(%q, %q)", c.name, c.cat)
	}
	e, ok := tax.Lookup("cat_file")
	require.True(t, ok)
	assert.Equal(t, FileRead, e.Category, "a refused re-registration must not move the tool")
	assert.Len(t, tax.Tools(), 1)
}

func TestMCPReadOnlyOnlyWhenDeclared(t *testing.T) {
	tax := Builtin()
	require.NoError(t, tax.AddMCP("mcp_lookup", true))
	require.NoError(t, tax.AddMCP("mcp_deploy", false))
	e, _ := tax.Lookup("mcp_lookup")
	assert.True(t, e.ReadOnly())
	e, _ = tax.Lookup("mcp_deploy")
	assert.False(t, e.ReadOnly())
	err := tax.add(Entry{Name: "sneaky", Category: Bash, DeclaredReadOnly: true})
	assert.ErrorIs(t, err, ErrReservedName)
	idx, ok := tax.Lookup(IndexTool)
	require.True(t, ok)
	assert.True(t, idx.ReadOnly())
}

func TestDefaultPolicyIsReadOnly(t *testing.T) {
	tax := Builtin()
	def := DefaultPolicy()
	for _, e := range tax.Tools() {
		err := def.Allows(e)
		if e.Category.ReadOnly() {
			assert.NoError(t, err, e.Name)
			continue
		}
		require.ErrorIs(t, err, ErrDenied, e.Name)
		assert.Contains(t, err.Error(), string(e.Category))
		assert.Contains(t, err.Error(), "--tools file_read,search,semantic_search,"+string(e.Category))
		// Following the advice allows the tool and keeps the rest.
		advised := Policy{Categories: []Category{FileRead, Search, SemanticSearch, e.Category}}
		assert.NoError(t, advised.Allows(e))
		assert.True(t, advised.AllowsCategory(FileRead))
	}
	assert.Equal(t, ReadOnly(), def.AllowedCategories())
	assert.Equal(t, "file_read,search,semantic_search", def.String())
	assert.NoError(t, def.Allows(Entry{Name: IndexTool}))
	// A declared read-only MCP tool is still not allowed by default: the
	// declaration is a third party's word.
	assert.ErrorIs(t, def.Allows(Entry{Name: "m", Category: MCP, DeclaredReadOnly: true}), ErrDenied)
	// The returned slices are the caller's.
	def.Categories[0] = Bash
	assert.Equal(t, FileRead, DefaultPolicy().Categories[0])
}

func TestPolicyZeroValueAllowsOnlyTheIndexTool(t *testing.T) {
	var zero Policy
	for _, e := range Builtin().Tools() {
		err := zero.Allows(e)
		require.ErrorIs(t, err, ErrDenied, e.Name)
		assert.Contains(t, err.Error(), "allowed: no category")
		assert.Contains(t, err.Error(), "--tools "+string(e.Category)+" (the category)", "no leading comma for an empty policy")
	}
	assert.NoError(t, zero.Allows(Entry{Name: IndexTool}))
	assert.Empty(t, zero.AllowedCategories())
	assert.Equal(t, "none", zero.String())
	// An empty, non-nil list means the same as nil.
	empty := Policy{Categories: []Category{}, Allow: []string{}}
	assert.ErrorIs(t, empty.Allows(Entry{Name: "read_file", Category: FileRead}), ErrDenied)
	assert.NoError(t, Policy{Deny: []string{IndexTool}}.Allows(Entry{Name: IndexTool}), "the index tool cannot be denied")
}

func TestPolicyAllowDeny(t *testing.T) {
	p := Policy{Categories: []Category{FileRead}, Allow: []string{"write_file", "grep"}, Deny: []string{"list_dir", "grep"}}
	tax := Builtin()
	check := func(name string) error { e, ok := tax.Lookup(name); require.True(t, ok, name); return p.Allows(e) }
	assert.NoError(t, check("read_file"))
	assert.NoError(t, check("write_file"), "allowed by name")
	assert.ErrorIs(t, check("list_dir"), ErrDenied, "denied by name beats category")
	assert.ErrorIs(t, check("grep"), ErrDenied, "deny beats allow")
	assert.ErrorIs(t, check("glob"), ErrDenied)
	assert.Contains(t, check("grep").Error(), "deny list")
}

// TestGlossaryMatchesEmittedStates walks real inventories, built to reach
// every state, and proves the glossary defines exactly the states that
// inventories emit.
func TestGlossaryMatchesEmittedStates(t *testing.T) {
	tax := Builtin()
	require.NoError(t, tax.AddMCP("mcp_a", false))
	require.NoError(t, tax.AddMCP("mcp_b", false))
	// This build has read_file, grep, glob, write_file and the MCP tools;
	// everything else is unavailable.
	have := map[string]bool{"read_file": true, "grep": true, "glob": true, "write_file": true, "mcp_a": true, "mcp_b": true}
	available := func(n string) bool { return have[n] }
	policies := []Policy{DefaultPolicy(), {Allow: []string{"mcp_a"}}, {Categories: []Category{MCP}}, {}, {Categories: append(ReadOnly(), FileWrite)}}

	emitted := map[string]bool{}
	for _, p := range policies {
		r := tax.Inventory(p, available)
		require.Len(t, r.Categories, len(All()))
		for _, c := range r.Categories {
			emitted["category/"+string(c.State)] = true
			for _, tr := range c.Tools {
				emitted["tool/"+string(tr.State)] = true
			}
			assert.Contains(t, r.Note, string(c.State))
		}
	}
	defined := map[string]bool{}
	for _, term := range glossary {
		defined[term.of+"/"+string(term.state)] = true
		assert.Contains(t, note(), string(term.state)+": "+term.meaning)
	}
	assert.Equal(t, defined, emitted, "the glossary must define exactly the states inventories emit")
}

func TestInventoryStates(t *testing.T) {
	tax := Builtin()
	have := map[string]bool{"read_file": true, "list_dir": true, "grep": true, "write_file": true}
	available := func(n string) bool { return have[n] }
	byCat := func(inv Inventory) map[Category]InventoryCategory {
		m := map[Category]InventoryCategory{}
		for _, c := range inv.Categories {
			m[c.Category] = c
		}
		return m
	}
	r := tax.Inventory(DefaultPolicy(), available)
	cats := byCat(r)
	assert.Equal(t, CategoryLoaded, cats[FileRead].State)
	assert.Equal(t, CategoryLoaded, cats[Search].State, "grep loaded, glob unavailable: every tool this build can run is loaded")
	assert.Equal(t, []InventoryTool{{"glob", true, ToolUnavailable}, {"grep", true, ToolLoaded}}, cats[Search].Tools)
	assert.Equal(t, CategoryNotLoadedHere, cats[FileWrite].State)
	assert.Equal(t, CategoryUnavailable, cats[Bash].State)
	assert.Equal(t, CategoryUnavailable, cats[MCP].State)
	assert.True(t, cats[FileRead].ReadOnly)
	assert.False(t, cats[FileWrite].ReadOnly)

	// file_write: write_file loaded, edit_file not built: loaded.
	p := Policy{Categories: append(ReadOnly(), FileWrite)}
	assert.Equal(t, CategoryLoaded, byCat(tax.Inventory(p, available))[FileWrite].State)
	// Partly loaded only when the policy withholds a tool this build has.
	p = Policy{Allow: []string{"read_file"}}
	assert.Equal(t, CategoryPartlyLoaded, byCat(tax.Inventory(p, available))[FileRead].State, "list_dir withheld")
	p = Policy{Categories: ReadOnly(), Deny: []string{"list_dir"}}
	assert.Equal(t, CategoryPartlyLoaded, byCat(tax.Inventory(p, available))[FileRead].State)
	// Everything available when available is nil.
	assert.Equal(t, CategoryNotLoadedHere, byCat(tax.Inventory(Policy{}, nil))[Bash].State)

	// JSON for the index tool, text for people.
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"state":"not-loaded-here"`)
	s := r.String()
	assert.Contains(t, s, IndexTool)
	assert.True(t, strings.HasPrefix(s, "policy: file_read,search,semantic_search\n"), s)
	assert.False(t, errors.Is(nil, ErrDenied))
}
