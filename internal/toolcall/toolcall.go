// Package toolcall is the OpenAI wire shape of a native tool call, read
// the way every mdap reader reads it: the arguments may be JSON text (as
// OpenAI sends them) or a JSON value (as Ollama sends them).
package toolcall

import (
	"bytes"
	"encoding/json"

	"github.com/tmc/langchaingo/llms"
)

// Call is a native tool call in OpenAI's wire shape:
// {"id", "type": "function", "function": {"name", "arguments"}}.
type Call struct {
	ID       string    `json:"id,omitempty"`
	Type     string    `json:"type,omitempty"`
	Function *Function `json:"function,omitempty"`
}

// Function is the function of a Call.
type Function struct {
	Name string `json:"name"`
	// Arguments is the arguments as they came: a JSON string holding the
	// arguments' text, or the arguments' JSON value itself.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ArgumentsText returns the arguments' text from their wire form raw: the
// string's content when raw is a JSON string, "" when raw is empty or
// null, else raw itself (an object, or any other value, as sent). Cost:
// linear in raw.
func ArgumentsText(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(t, &s) == nil {
		return s
	}
	return string(raw)
}

// LLM returns c as langchaingo's tool call (its arguments as text, see
// ArgumentsText); a Call without a Function gives a ToolCall without a
// FunctionCall. Cost: linear in the arguments.
func (c Call) LLM() llms.ToolCall {
	tc := llms.ToolCall{ID: c.ID, Type: c.Type}
	if c.Function != nil {
		tc.FunctionCall = &llms.FunctionCall{Name: c.Function.Name, Arguments: ArgumentsText(c.Function.Arguments)}
	}
	return tc
}
