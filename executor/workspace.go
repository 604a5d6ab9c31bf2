package executor

// Workspace is a folder an executor's tools work in, with the tools that
// work there: executor/fstools opens one for the built-in file tools. An
// executor given one with [WithWorkspace] registers its tools, reports its
// root and closes it.
type Workspace interface {
	// Root is the folder's path, for reports and resumed runs.
	Root() string
	// Tools are the tools to register, in order, before those of
	// [WithTools]. Called once, by [New].
	Tools() []Tool
	// Close releases the folder; afterwards the tools fail. It must be
	// idempotent and safe for concurrent use.
	Close() error
}
