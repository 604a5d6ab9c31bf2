package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/mdap-go/mdap/intent"
)

// Registration errors, for errors.Is. [Executor.Register] and [New] return
// errors wrapping one of them, with a message naming the tool.
var (
	// ErrDuplicateTool: a tool of that name is already registered here, or
	// the taxonomy already places that name in another category.
	ErrDuplicateTool = errors.New("duplicate tool")
	// ErrInvalidTool: a nil tool, or a name or category the taxonomy refuses
	// (empty, with spaces or commas, a category's name, the index tool's
	// name, an unknown category). The taxonomy's own error is wrapped too.
	ErrInvalidTool = errors.New("bad tool")
	// ErrInvalidSchema: a tool's argument schema, or a schema file given to
	// executor/declare, is not JSON or does not compile as a JSON Schema.
	ErrInvalidSchema = errors.New("bad tool schema")
	// ErrInvalidRoot: the root given to executor/fstools is not an existing
	// directory.
	ErrInvalidRoot = errors.New("bad root folder")
)

// Reason errors, for tools: a [Tool] whose Run returns an error wrapping
// ErrOutsideRoot, ErrInvalidPath, ErrNotRegular or ErrInvalidArgs makes a
// denied observation with the matching [intent.Reason], one wrapping
// ErrTimeout or fs.ErrNotExist a failed one with its reason; any other
// error makes a failed one (intent.ReasonToolError).
var (
	// ErrInvalidArgs: the arguments do not validate (intent.ReasonInvalidArgs).
	ErrInvalidArgs = errors.New("invalid arguments")
	// ErrOutsideRoot: a path leaves the root folder: "..", an absolute
	// path, or a symbolic link leading out (intent.ReasonOutsideRoot).
	ErrOutsideRoot = errors.New("path outside the root folder")
	// ErrInvalidPath: a path that cannot name a file: a NUL byte, an empty
	// path, a symbolic-link loop (intent.ReasonBadPath).
	ErrInvalidPath = errors.New("bad path")
	// ErrNotRegular: the file is a directory, FIFO, device or socket where
	// a regular file is needed (intent.ReasonNotRegular).
	ErrNotRegular = errors.New("not a regular file")
	// ErrTimeout: the call did not finish within the per-call timeout
	// (intent.ReasonTimeout).
	ErrTimeout = errors.New("tool call timed out")
)

// classify maps a tool's error to its status and reason.
func classify(err error) (intent.Status, intent.Reason) {
	switch {
	case errors.Is(err, ErrOutsideRoot):
		return intent.StatusDenied, intent.ReasonOutsideRoot
	case errors.Is(err, ErrInvalidPath):
		return intent.StatusDenied, intent.ReasonBadPath
	case errors.Is(err, ErrNotRegular):
		return intent.StatusDenied, intent.ReasonNotRegular
	case errors.Is(err, ErrInvalidArgs):
		return intent.StatusDenied, intent.ReasonInvalidArgs
	case errors.Is(err, fs.ErrNotExist):
		return intent.StatusError, intent.ReasonNotFound
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrTimeout):
		return intent.StatusError, intent.ReasonTimeout
	default:
		return intent.StatusError, intent.ReasonToolError
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
