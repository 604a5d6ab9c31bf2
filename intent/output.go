package intent

// ToolIntent is a microagent's proposal of one tool call. A microagent never
// runs a tool: it proposes one, the proposals are voted on like any answer,
// and only the winning call is executed (by package executor).
//
// Rationale is free text for humans and logs; it never takes part in the key,
// so two samples that propose the same call for different stated reasons vote
// together.
type ToolIntent struct {
	// Tool is the name of the tool to call, for example "read_file".
	Tool string `json:"tool"`
	// Args holds the call's arguments as decoded JSON values.
	Args map[string]any `json:"args"`
	// Rationale is why the microagent proposes the call. Ignored by Key.
	Rationale string `json:"rationale,omitempty"`
}

// Output is what one microagent sample says about one step: a structured
// answer, a tool intent, or both.
//
// Value is the step's structured answer as decoded JSON (map[string]any,
// []any, string, float64, bool or nil), for example
// {"move":[1,0,2],"next_state":[[2,3],[],[1]]}. Intent is nil when the
// sample proposes no tool call.
type Output struct {
	Value  any         `json:"value,omitempty"`
	Intent *ToolIntent `json:"tool_intent,omitempty"`
}
