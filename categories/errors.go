package categories

import "errors"

// Sentinel errors, for errors.Is. Every error this package returns wraps one
// of them and says in its message what was wrong and how to fix it.
var (
	// ErrUnknownName: a name is neither a category nor a known tool.
	ErrUnknownName = errors.New("unknown category or tool")
	// ErrDuplicate: a tool is registered twice, or in two categories.
	ErrDuplicate = errors.New("tool already registered")
	// ErrReservedName: a tool would take a category's name or the index
	// tool's name.
	ErrReservedName = errors.New("reserved name")
	// ErrDenied: the policy does not allow a tool.
	ErrDenied = errors.New("tool not allowed by policy")
)
