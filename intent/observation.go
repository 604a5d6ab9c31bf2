package intent

import (
	"fmt"
	"time"

	"github.com/mdap-go/mdap/categories"
)

// Status is whether a call ran.
type Status string

// The statuses of an [Observation].
const (
	StatusOK     Status = "ok"     // the tool ran and returned content
	StatusDenied Status = "denied" // refused: nothing ran, or the sandbox refused before touching anything
	StatusError  Status = "error"  // the tool ran (or started) and failed, timed out or panicked
)

// Observation is what a tool call gave back: the result of the winning
// [ToolIntent] as the executor ran it (or refused it), as data for the
// journal and as text for the next step's prompt ([Observation.Text]). A
// denial is an observation, not an error. Package executor produces
// observations; tasks read them, which is why the type lives here, below
// both.
type Observation struct {
	// Tool is the name the call asked for, as given.
	Tool string `json:"tool"`
	// Category is the tool's category; empty for the index tool and for
	// unknown tools.
	Category categories.Category `json:"category,omitempty"`
	// ReadOnly says that the tool cannot change anything. False for
	// unknown tools.
	ReadOnly bool `json:"read_only"`
	// Status says whether the call ran; Reason says why not, or how it
	// failed (empty when Status is ok).
	Status Status `json:"status"`
	Reason Reason `json:"reason,omitempty"`
	// Content is the tool's output, or the denial or failure worded for a
	// model. At most the output cap plus a short truncation note.
	Content string `json:"content"`
	// Truncated says that Content was cut, by the output cap or by the
	// tool itself (a read cap, a result limit).
	Truncated bool `json:"truncated,omitempty"`
	// Healed lists the arguments that arrived as JSON in a string and
	// were decoded, for example "arguments.paths".
	Healed []string `json:"healed,omitempty"`
	// Duration is how long the check and the call took.
	Duration time.Duration `json:"duration_ns"`
}

// Denied reports whether the call was refused (Status denied).
func (o Observation) Denied() bool { return o.Status == StatusDenied }

// OK reports whether the tool ran and returned content.
func (o Observation) OK() bool { return o.Status == StatusOK }

// Text is the observation as the next prompt shows it: one header line
// naming the tool and the outcome, then the content. It leaves out the
// duration, so equal calls give equal text.
func (o Observation) Text() string {
	switch o.Status {
	case StatusOK:
		if o.Content == "" {
			return fmt.Sprintf("Tool %q returned no output.", o.Tool)
		}
		return fmt.Sprintf("Tool %q returned:\n%s", o.Tool, o.Content)
	case StatusDenied:
		return fmt.Sprintf("Tool call %q was denied (%s): %s", o.Tool, o.Reason, o.Content)
	default:
		return fmt.Sprintf("Tool call %q failed (%s): %s", o.Tool, o.Reason, o.Content)
	}
}

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
