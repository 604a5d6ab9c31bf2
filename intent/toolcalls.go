package intent

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
)

// FromToolCalls reads a step answered with native tool calls (langchaingo's
// [llms.ToolCall], as found in a ContentChoice) and returns the same Output,
// and so the same [Key], as the same call written as JSON text: the
// function's Name is the Tool, its Arguments string is decoded as the Args
// object (empty, white space only or "null" meaning no arguments), Value is
// nil and Rationale is empty. The call's ID is ignored; its Type must be
// "function" or empty (Anthropic's calls come without one).
//
// Errors: [ErrNoAnswer] for no call; [ErrAmbiguous] for more than one call
// (one step proposes one call, even if the calls are identical);
// [ErrInvalidIntent] for a call without a FunctionCall, of another Type,
// with an empty or non-UTF-8 name, or with Arguments that are not a JSON
// object (the decoding error is in the message). Cost: linear in the size of
// the arguments.
func FromToolCalls(calls []llms.ToolCall) (Output, error) {
	switch len(calls) {
	case 0:
		return Output{}, fmt.Errorf("%w: the step has no tool call", ErrNoAnswer)
	case 1:
	default:
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = "?"
			if c.FunctionCall != nil {
				names[i] = fmt.Sprintf("%q", c.FunctionCall.Name)
			}
		}
		return Output{}, fmt.Errorf("%w: the step has %d tool calls (%s), want one",
			ErrAmbiguous, len(calls), strings.Join(names, ", "))
	}
	c := calls[0]
	if c.Type != "" && c.Type != "function" {
		return Output{}, fmt.Errorf("%w: tool call %q has type %q, want \"function\"", ErrInvalidIntent, c.ID, c.Type)
	}
	fc := c.FunctionCall
	if fc == nil {
		return Output{}, fmt.Errorf("%w: tool call %q has no function", ErrInvalidIntent, c.ID)
	}
	if fc.Name == "" {
		return Output{}, fmt.Errorf("%w: tool call %q has an empty function name", ErrInvalidIntent, c.ID)
	}
	if !utf8.ValidString(fc.Name) {
		return Output{}, fmt.Errorf("%w: function name %q is not valid UTF-8", ErrInvalidIntent, fc.Name)
	}
	args, p := healArgs(fc.Arguments, "arguments")
	if p != nil {
		return Output{}, fmt.Errorf("%w: function %q: %s", p.sentinel, fc.Name, p.msg)
	}
	return Output{Intent: &ToolIntent{Tool: fc.Name, Args: args}}, nil
}
