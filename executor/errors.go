package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/mdap-go/mdap/categories"
)

// Registration errors, for errors.Is. [Executor.Register] and [New] return
// errors wrapping one of them, with a message naming the tool.
var (
	// ErrDuplicateTool: a tool of that name is already registered here, or
	// the taxonomy already places that name in another category.
	ErrDuplicateTool = errors.New("duplicate tool")
	// ErrBadTool: a nil tool, or a name or category the taxonomy refuses
	// (empty, with spaces or commas, a category's name, the index tool's
	// name, an unknown category). The taxonomy's own error is wrapped too.
	ErrBadTool = errors.New("bad tool")
	// ErrBadSchema: a tool's argument schema, or a schema file given to
	// [Declare], is not JSON or does not compile as a JSON Schema.
	ErrBadSchema = errors.New("bad tool schema")
	// ErrBadSkill: a skill file's front matter given to [Declare] does not
	// parse.
	ErrBadSkill = errors.New("bad skill front matter")
	// ErrBadRoot: the root given to [New] is not an existing directory.
	ErrBadRoot = errors.New("bad root folder")
)

// Reason errors, for errors.Is on [Observation.Err] and for tools. A [Tool]
// whose Run returns an error wrapping ErrOutsideRoot, ErrBadPath,
// ErrNotRegular or ErrInvalidArgs makes a denied observation with the
// matching [Reason]; any other error makes a failed one.
var (
	// ErrUnknownTool: no tool of that name exists here (ReasonUnknownTool).
	ErrUnknownTool = errors.New("unknown tool")
	// ErrUnavailable: the taxonomy knows the tool but this executor has no
	// implementation of it (ReasonUnavailable).
	ErrUnavailable = errors.New("tool unavailable")
	// ErrInvalidArgs: the arguments do not validate (ReasonInvalidArgs).
	ErrInvalidArgs = errors.New("invalid arguments")
	// ErrOutsideRoot: a path leaves the root folder: "..", an absolute
	// path, or a symbolic link leading out (ReasonOutsideRoot).
	ErrOutsideRoot = errors.New("path outside the root folder")
	// ErrBadPath: a path that cannot name a file: a NUL byte, an empty
	// path, a symbolic-link loop (ReasonBadPath).
	ErrBadPath = errors.New("bad path")
	// ErrNotRegular: the file is a directory, FIFO, device or socket where
	// a regular file is needed (ReasonNotRegular).
	ErrNotRegular = errors.New("not a regular file")
	// ErrTimeout: the call did not finish within the per-call timeout
	// (ReasonTimeout).
	ErrTimeout = errors.New("tool call timed out")
	// ErrPanic: the tool panicked (ReasonPanic).
	ErrPanic = errors.New("tool panicked")
	// ErrToolFailed: the tool returned an error of its own
	// (ReasonToolError).
	ErrToolFailed = errors.New("tool failed")
)

// Reason is the kind of a denial or failure, stable for code and tests; the
// observation's Content carries the words for the model.
type Reason string

// The reasons an [Observation] can carry. The first seven are denials (the
// call did not run, or the sandbox refused it before touching anything);
// the others are failures of a call that ran.
const (
	ReasonUnknownTool Reason = "unknown_tool"      // no such tool
	ReasonUnavailable Reason = "unavailable"       // in the taxonomy, not in this executor
	ReasonNotAllowed  Reason = "not_allowed"       // the policy withholds it
	ReasonInvalidArgs Reason = "invalid_arguments" // arguments do not validate
	ReasonOutsideRoot Reason = "outside_root"      // a path leaves the root
	ReasonBadPath     Reason = "bad_path"          // NUL byte, empty path, link loop
	ReasonNotRegular  Reason = "not_regular_file"  // directory, FIFO, device, socket

	ReasonNotFound  Reason = "not_found"  // the file does not exist
	ReasonTimeout   Reason = "timeout"    // the per-call timeout expired
	ReasonPanic     Reason = "panic"      // the tool panicked
	ReasonToolError Reason = "tool_error" // any other error of the tool
	ReasonCancelled Reason = "cancelled"  // the caller's context was cancelled
)

// reasonErr maps a reason to the sentinel that Observation.Err wraps.
var reasonErr = map[Reason]error{
	ReasonUnknownTool: ErrUnknownTool,
	ReasonUnavailable: ErrUnavailable,
	ReasonNotAllowed:  categories.ErrDenied,
	ReasonInvalidArgs: ErrInvalidArgs,
	ReasonOutsideRoot: ErrOutsideRoot,
	ReasonBadPath:     ErrBadPath,
	ReasonNotRegular:  ErrNotRegular,
	ReasonNotFound:    fs.ErrNotExist,
	ReasonTimeout:     ErrTimeout,
	ReasonPanic:       ErrPanic,
	ReasonToolError:   ErrToolFailed,
	ReasonCancelled:   context.Canceled,
}

// classify maps a tool's error to its status and reason.
func classify(err error) (Status, Reason) {
	switch {
	case errors.Is(err, ErrOutsideRoot):
		return StatusDenied, ReasonOutsideRoot
	case errors.Is(err, ErrBadPath):
		return StatusDenied, ReasonBadPath
	case errors.Is(err, ErrNotRegular):
		return StatusDenied, ReasonNotRegular
	case errors.Is(err, ErrInvalidArgs):
		return StatusDenied, ReasonInvalidArgs
	case errors.Is(err, fs.ErrNotExist):
		return StatusError, ReasonNotFound
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrTimeout):
		return StatusError, ReasonTimeout
	default:
		return StatusError, ReasonToolError
	}
}

// reasonError is a message for the model that wraps a sentinel without
// repeating the sentinel's own text.
type reasonError struct {
	sentinel error
	msg      string
}

func (e *reasonError) Error() string { return e.msg }
func (e *reasonError) Unwrap() error { return e.sentinel }

// refusef returns an error whose message is the formatted text and which
// wraps sentinel for errors.Is and classify.
func refusef(sentinel error, format string, a ...any) error {
	return &reasonError{sentinel: sentinel, msg: fmt.Sprintf(format, a...)}
}
