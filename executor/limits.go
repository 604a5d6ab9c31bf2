package executor

// Input limits. A call beyond one of them is denied with a message that
// names the limit, before its tool runs: by Execute and Check (an
// observation) and by Normalize (an error). They bound the memory and CPU
// one call can take, whatever a model proposes.
const (
	// MaxToolNameBytes is the longest tool name looked up; a longer one is
	// an unknown tool (intent.ReasonUnknownTool), and the observation's
	// Tool is cut to this length.
	MaxToolNameBytes = 256
	// MaxArgs is the most top-level arguments one call may have
	// (intent.ReasonInvalidArgs).
	MaxArgs = 64
	// MaxArgsDepth is the deepest nesting of objects and arrays in the
	// arguments; the arguments object itself is depth 1
	// (intent.ReasonInvalidArgs).
	MaxArgsDepth = 32
	// MaxArgValues is the most values (strings, numbers, booleans, nulls,
	// objects and arrays, at any depth) one call's arguments may hold
	// (intent.ReasonInvalidArgs).
	MaxArgValues = 10000
	// MaxPathBytes is the longest path a built-in file tool accepts, in
	// bytes (intent.ReasonBadPath; their schemas also say maxLength).
	MaxPathBytes = 4096
	// MaxPathDepth is the most components a path may have, and the
	// deepest a path may become while its symbolic links are followed
	// (intent.ReasonBadPath).
	MaxPathDepth = 256
	// MaxProblems is how many problems an invalid-arguments denial lists
	// one by one; it counts the rest.
	MaxProblems = 20
)
