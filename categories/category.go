package categories

import (
	"fmt"
	"slices"
	"strings"
)

// Category is a family of tools with the same kind of effect on the world.
// Every tool belongs to exactly one category; a [Policy] allows or withholds
// whole categories.
type Category string

// The categories. Only [FileRead], [Search] and [SemanticSearch] are
// read-only; every other category has side effects.
const (
	FileRead       Category = "file_read"       // read files under a root
	FileWrite      Category = "file_write"      // create or change files
	Search         Category = "search"          // search file contents or names
	SemanticSearch Category = "semantic_search" // search by meaning (embeddings)
	Bash           Category = "bash"            // run shell commands
	Git            Category = "git"             // operate on a git repository
	Web            Category = "web"             // reach the network
	AgentPool      Category = "agent_pool"      // start or message other agents
	TaskManager    Category = "task_manager"    // change a task list
	MCP            Category = "mcp"             // tools served by an MCP server
)

// all lists every category in display order. A category that is neither in
// readOnly nor side-effecting would be a bug; TestEveryCategoryClassified
// holds the two sets to that.
var all = []Category{FileRead, Search, SemanticSearch, FileWrite, Bash, Git, Web, AgentPool, TaskManager, MCP}

var readOnly = []Category{FileRead, Search, SemanticSearch}

// All returns every category, read-only ones first. The caller owns the
// returned slice.
func All() []Category { return slices.Clone(all) }

// ReadOnly returns the read-only categories: file_read, search and
// semantic_search. The caller owns the returned slice.
func ReadOnly() []Category { return slices.Clone(readOnly) }

// ReadOnly reports whether tools of c cannot change anything. It is false
// for unknown categories.
func (c Category) ReadOnly() bool { return slices.Contains(readOnly, c) }

// Valid reports whether c is one of the categories of [All].
func (c Category) Valid() bool { return slices.Contains(all, c) }

// ParseCategory returns the category named s. An unknown name is an error
// wrapping [ErrUnknownName] that lists the valid names.
func ParseCategory(s string) (Category, error) {
	c := Category(strings.TrimSpace(s))
	if !c.Valid() {
		return "", fmt.Errorf("%w: category %q; valid categories: %s", ErrUnknownName, s, joinCategories(all))
	}
	return c, nil
}

func joinCategories(cs []Category) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
