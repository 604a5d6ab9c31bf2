package categories

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// IndexTool is the name of the tool that reports the categories and what is
// loaded, withheld or unavailable. It belongs to no category and no policy
// can withhold it: it is how a model learns what was withheld and how to ask
// for it. It cannot be registered in a [Taxonomy].
const IndexTool = "list_tool_categories"

// Entry is one tool of a [Taxonomy]: its name, its category and whether it
// is read-only.
type Entry struct {
	Name     string   `json:"name"`
	Category Category `json:"category"`
	// DeclaredReadOnly is set for an MCP tool whose server declared it
	// read-only (see [Taxonomy.AddMCP]). Tools of other categories take
	// their category's nature.
	DeclaredReadOnly bool `json:"declared_read_only,omitempty"`
}

// ReadOnly reports whether the tool cannot change anything: its category is
// read-only, or it is an MCP tool declared read-only. The index tool is
// read-only.
func (e Entry) ReadOnly() bool {
	if e.Name == IndexTool && e.Category == "" {
		return true
	}
	return e.Category.ReadOnly() || (e.Category == MCP && e.DeclaredReadOnly)
}

// Taxonomy is a total map of tools to categories: each tool sits in exactly
// one category, no tool takes a category's name, and the index tool is in
// none. The zero value is an empty taxonomy ready to use; [Builtin] returns
// one that knows the standard tools. A Taxonomy is safe for concurrent use.
type Taxonomy struct {
	mu      sync.RWMutex
	entries map[string]Entry
}

// builtinTools are the tools this project knows by name, one or more per
// category. Which of them a build can actually run is the executor's
// business; the rest are reported as unavailable.
var builtinTools = []Entry{
	{Name: "read_file", Category: FileRead},
	{Name: "list_dir", Category: FileRead},
	{Name: "glob", Category: Search},
	{Name: "grep", Category: Search},
	{Name: "embedding_search", Category: SemanticSearch},
	{Name: "write_file", Category: FileWrite},
	{Name: "edit_file", Category: FileWrite},
	{Name: "run_command", Category: Bash},
	{Name: "git_command", Category: Git},
	{Name: "fetch_url", Category: Web},
	{Name: "web_search", Category: Web},
	{Name: "spawn_agent", Category: AgentPool},
	{Name: "update_tasks", Category: TaskManager},
}

// Builtin returns a new taxonomy holding the standard tools: read_file,
// list_dir (file_read); glob, grep (search); embedding_search
// (semantic_search); write_file, edit_file (file_write); run_command (bash);
// git_command (git); fetch_url, web_search (web); spawn_agent (agent_pool);
// update_tasks (task_manager). MCP tools are added at run time with AddMCP.
func Builtin() *Taxonomy {
	t := &Taxonomy{}
	for _, e := range builtinTools {
		if err := t.add(e); err != nil {
			panic(err) // the table above is wrong; TestBuiltin catches it
		}
	}
	return t
}

// Add puts tool name in category c. It fails, wrapping [ErrUnknownName], for
// a category that is not one of [All]; wrapping [ErrReservedName] for an
// empty name, a category's name or [IndexTool]; and wrapping [ErrDuplicate]
// when the name is already registered, in any category.
func (t *Taxonomy) Add(name string, c Category) error {
	return t.add(Entry{Name: name, Category: c})
}

// AddMCP puts tool name in the mcp category. An MCP tool is side-effecting
// unless its server declared it read-only. Errors are those of Add.
func (t *Taxonomy) AddMCP(name string, readOnly bool) error {
	return t.add(Entry{Name: name, Category: MCP, DeclaredReadOnly: readOnly})
}

func (t *Taxonomy) add(e Entry) error {
	if !e.Category.Valid() {
		return fmt.Errorf("%w: category %q for tool %q; valid categories: %s", ErrUnknownName, e.Category, e.Name, joinCategories(all))
	}
	if strings.TrimSpace(e.Name) == "" || e.Name != strings.TrimSpace(e.Name) || strings.ContainsAny(e.Name, ", \t\n") {
		return fmt.Errorf("%w: tool name %q must be non-empty, without spaces or commas", ErrReservedName, e.Name)
	}
	if Category(e.Name).Valid() {
		return fmt.Errorf("%w: tool %q has a category's name; rename the tool", ErrReservedName, e.Name)
	}
	if e.Name == IndexTool {
		return fmt.Errorf("%w: %q is the index tool, which belongs to no category", ErrReservedName, e.Name)
	}
	if e.DeclaredReadOnly && e.Category != MCP {
		return fmt.Errorf("%w: only an MCP tool can be declared read-only, not %q in %s", ErrReservedName, e.Name, e.Category)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.entries[e.Name]; ok {
		return fmt.Errorf("%w: %q is already in category %s", ErrDuplicate, e.Name, old.Category)
	}
	if t.entries == nil {
		t.entries = make(map[string]Entry)
	}
	t.entries[e.Name] = e
	return nil
}

// Lookup returns the entry of tool name. The index tool is found with an
// empty category.
func (t *Taxonomy) Lookup(name string) (Entry, bool) {
	if name == IndexTool {
		return Entry{Name: IndexTool}, true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.entries[name]
	return e, ok
}

// Tools returns every registered tool (not the index tool), ordered by
// category as in [All], then by name. Cost: O(n log n) in the number of
// tools.
func (t *Taxonomy) Tools() []Entry {
	t.mu.RLock()
	out := slices.Collect(maps.Values(t.entries))
	t.mu.RUnlock()
	slices.SortFunc(out, func(a, b Entry) int {
		if c := slices.Index(all, a.Category) - slices.Index(all, b.Category); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
