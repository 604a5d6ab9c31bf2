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

func TestPolicyZeroValueIsReadOnly(t *testing.T) {
	tax := Builtin()
	var zero Policy
	for _, e := range tax.Tools() {
		err := zero.Allows(e)
		if e.Category.ReadOnly() {
			assert.NoError(t, err, e.Name)
		} else {
			require.ErrorIs(t, err, ErrDenied, e.Name)
			assert.Contains(t, err.Error(), string(e.Category))
			assert.Contains(t, err.Error(), "--tools file_read,search,semantic_search,"+string(e.Category))
			// Following the advice allows the tool and keeps the rest.
			advised, perr := tax.ParseSelection("file_read,search,semantic_search," + string(e.Category))
			require.NoError(t, perr)
			assert.NoError(t, advised.Allows(e))
			assert.True(t, advised.AllowsCategory(FileRead))
		}
		assert.Equal(t, zero.Allows(e) == nil, DefaultPolicy().Allows(e) == nil, e.Name)
	}
	assert.NoError(t, zero.Allows(Entry{Name: IndexTool}))
	assert.NoError(t, Policy{Categories: []Category{}, Deny: []string{IndexTool}}.Allows(Entry{Name: IndexTool}))
	// A declared read-only MCP tool is still not allowed by default: the
	// declaration is a third party's word.
	assert.ErrorIs(t, zero.Allows(Entry{Name: "m", Category: MCP, DeclaredReadOnly: true}), ErrDenied)
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
	empty := Policy{Categories: []Category{}}
	assert.ErrorIs(t, empty.Allows(Entry{Name: "read_file", Category: FileRead}), ErrDenied)
}

func TestParseSelection(t *testing.T) {
	tax := Builtin()
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
		p, err := tax.ParseSelection(c.in)
		require.NoError(t, err, c.in)
		for _, n := range c.allowed {
			e, _ := tax.Lookup(n)
			assert.NoError(t, p.Allows(e), "%q should allow %s", c.in, n)
		}
		for _, n := range c.denied {
			e, _ := tax.Lookup(n)
			assert.ErrorIs(t, p.Allows(e), ErrDenied, "%q should deny %s", c.in, n)
		}
		// String round-trips.
		back, err := tax.ParseSelection(p.String())
		require.NoError(t, err, p.String())
		for _, e := range tax.Tools() {
			assert.Equal(t, p.Allows(e) == nil, back.Allows(e) == nil, "%q -> %q: %s", c.in, p.String(), e.Name)
		}
	}
}

func TestParseSelectionErrors(t *testing.T) {
	tax := Builtin()
	_, err := tax.ParseSelection("file_read,shell")
	require.ErrorIs(t, err, ErrUnknownName)
	for _, want := range []string{`"shell"`, "file_read", "grep", "write_file", "read_only"} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = tax.ParseSelection("-" + IndexTool)
	assert.ErrorIs(t, err, ErrReservedName)
}

// TestGlossaryMatchesEmittedStates walks real reports, built to reach every
// state, and proves the glossary defines exactly the states that reports
// emit.
func TestGlossaryMatchesEmittedStates(t *testing.T) {
	tax := Builtin()
	require.NoError(t, tax.AddMCP("mcp_a", false))
	require.NoError(t, tax.AddMCP("mcp_b", false))
	// This build has read_file, grep, glob, write_file and the MCP tools;
	// everything else is unavailable.
	have := map[string]bool{"read_file": true, "grep": true, "glob": true, "write_file": true, "mcp_a": true, "mcp_b": true}
	available := func(n string) bool { return have[n] }
	policies := []string{"", "mcp_a", "mcp", "none", "read_only,file_write"}

	emitted := map[string]bool{}
	for _, sel := range policies {
		p, err := tax.ParseSelection(sel)
		require.NoError(t, err)
		r := tax.Report(p, available)
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
	for _, term := range Glossary() {
		defined[term.Of+"/"+string(term.State)] = true
		assert.Contains(t, note(), string(term.State)+": "+term.Meaning)
	}
	assert.Equal(t, defined, emitted, "the glossary must define exactly the states reports emit")
}

func TestReportStates(t *testing.T) {
	tax := Builtin()
	have := map[string]bool{"read_file": true, "list_dir": true, "grep": true, "write_file": true}
	r := tax.Report(Policy{}, func(n string) bool { return have[n] })
	byCat := map[Category]CategoryReport{}
	for _, c := range r.Categories {
		byCat[c.Category] = c
	}
	assert.Equal(t, CategoryLoaded, byCat[FileRead].State)
	assert.Equal(t, CategoryPartlyLoaded, byCat[Search].State) // grep loaded, glob unavailable
	assert.Equal(t, CategoryNotLoadedHere, byCat[FileWrite].State)
	assert.Equal(t, CategoryUnavailable, byCat[Bash].State)
	assert.Equal(t, CategoryUnavailable, byCat[MCP].State)
	assert.True(t, byCat[FileRead].ReadOnly)
	assert.False(t, byCat[FileWrite].ReadOnly)

	// JSON for the index tool, text for people.
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"state":"not-loaded-here"`)
	s := r.String()
	assert.Contains(t, s, IndexTool)
	assert.True(t, strings.HasPrefix(s, "policy: file_read,search,semantic_search\n"), s)
	assert.False(t, errors.Is(nil, ErrDenied))
}
