package maker

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mdap-go/mdap/executor"
	"github.com/tmc/langchaingo/llms"
)

// ToolDeclaration is how a run's declared tools (Solver.Tools) reach the
// model: natively, as the provider's tool definitions (llms.WithTools),
// or as text in the prompt, or both.
type ToolDeclaration string

// The ways of declaring tools.
const (
	// DeclareAuto (also the zero value) chooses native when the model
	// says it takes native tools (NativeToolModel), else prompt.
	DeclareAuto ToolDeclaration = "auto"
	// DeclareNative sends each tool's name, description and JSON Schema
	// with every call (llms.WithTools); replies may call a tool natively
	// (maker.DecodeReply reads native tool calls).
	DeclareNative ToolDeclaration = "native"
	// DeclarePrompt appends executor.DescribeTools' text to the step's
	// system message (or adds one), for models without native tools
	// (Ollama's native API, the simulated model, a user's llms.Model).
	DeclarePrompt ToolDeclaration = "prompt"
	// DeclareBoth does both.
	DeclareBoth ToolDeclaration = "both"
)

// ErrToolDeclaration: a ToolDeclaration that is none of the above.
var ErrToolDeclaration = errors.New("bad tool declaration")

// ParseToolDeclaration reads "auto" (or ""), "native", "prompt" or
// "both". Errors wrap ErrToolDeclaration and list the choices.
func ParseToolDeclaration(s string) (ToolDeclaration, error) {
	switch d := ToolDeclaration(s); d {
	case "", DeclareAuto:
		return DeclareAuto, nil
	case DeclareNative, DeclarePrompt, DeclareBoth:
		return d, nil
	}
	return "", fmt.Errorf("%w: %q: use auto, native, prompt or both", ErrToolDeclaration, s)
}

// NativeToolModel is implemented by models that say whether they take
// native tool declarations (maker/models: OpenAI-compatible and
// Anthropic models do, Ollama's native API does not). An Ensemble takes
// them when every member does. A model that does not implement it is
// taken not to.
type NativeToolModel interface {
	NativeTools() bool
}

// NativeTools implements NativeToolModel: true when every member takes
// native tools.
func (e *Ensemble) NativeTools() bool {
	return !slices.ContainsFunc(e.members, func(m llms.Model) bool { return !nativeTools(m) })
}

func nativeTools(m llms.Model) bool {
	n, ok := m.(NativeToolModel)
	return ok && n.NativeTools()
}

// Resolve returns the declaration a run of model makes: d itself, or for
// DeclareAuto (and ""), native when the model takes native tools, else
// prompt. Errors wrap ErrToolDeclaration.
func (d ToolDeclaration) Resolve(model llms.Model) (ToolDeclaration, error) {
	d, err := ParseToolDeclaration(string(d))
	if err != nil {
		return "", err
	}
	if d != DeclareAuto {
		return d, nil
	}
	if nativeTools(model) {
		return DeclareNative, nil
	}
	return DeclarePrompt, nil
}

// declaration is how a microagent declares the solver's tools: the
// native list (nil when not native) and the prompt text ("" when not in
// the prompt). The same for every sample of a run.
func (s *Solver) declaration() (native []llms.Tool, text string, mode ToolDeclaration, err error) {
	if len(s.Tools) == 0 {
		return nil, "", "", nil
	}
	mode, err = s.ToolDeclaration.Resolve(s.Model)
	if err != nil {
		return nil, "", "", err
	}
	if mode == DeclareNative || mode == DeclareBoth {
		native = s.Tools
	}
	if mode == DeclarePrompt || mode == DeclareBoth {
		text = executor.DescribeTools(s.Tools)
	}
	return native, text, mode, nil
}

// withToolText returns msgs with text appended to the first system
// message, or with a system message of text in front when there is none.
// msgs itself is not changed.
func withToolText(msgs []llms.MessageContent, text string) []llms.MessageContent {
	if text == "" {
		return msgs
	}
	out := slices.Clone(msgs)
	for i, m := range out {
		if m.Role == llms.ChatMessageTypeSystem {
			// One text part, as the task wrote it: some providers'
			// clients send a message of several parts as an array,
			// which not every server reads.
			parts := slices.Clone(m.Parts)
			if n := len(parts); n > 0 {
				if t, ok := parts[n-1].(llms.TextContent); ok {
					parts[n-1] = llms.TextContent{Text: t.Text + "\n" + text}
					out[i] = llms.MessageContent{Role: m.Role, Parts: parts}
					return out
				}
			}
			out[i] = llms.MessageContent{Role: m.Role, Parts: append(parts, llms.TextPart(text))}
			return out
		}
	}
	return append([]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, text)}, out...)
}
