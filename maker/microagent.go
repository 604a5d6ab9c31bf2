package maker

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// DefaultMaxTokens is the paper's cap on a reply's length, in tokens.
const DefaultMaxTokens = 750

// ErrNoChoice is returned when a provider answers with no choice at all.
var ErrNoChoice = errors.New("model returned no choice")

// DefaultTemperature is the paper's schedule: the first sample of a step at
// temperature 0, every other at 0.1.
func DefaultTemperature(sample int) float64 {
	if sample == 0 {
		return 0
	}
	return 0.1
}

// microagent makes one stateless model call per sample.
type microagent struct {
	model       llms.Model
	maxTokens   int
	temperature func(int) float64
	tools       []llms.Tool
	options     []llms.CallOption
	schema      json.RawMessage // the answer schema, with Solver.Structured
}

// sample asks the model once. The context carries the sample's identity.
func (a *microagent) sample(ctx context.Context, id SampleID, msgs []llms.MessageContent) (Reply, time.Duration, error) {
	opts := append([]llms.CallOption{
		llms.WithTemperature(a.temperature(id.Index)),
		llms.WithMaxTokens(a.maxTokens),
	}, a.options...)
	if len(a.tools) > 0 {
		opts = append(opts, llms.WithTools(a.tools))
	}
	ctx = WithSampleID(ctx, id)
	if a.schema != nil {
		ctx = WithAnswerSchema(ctx, a.schema)
		opts = append(opts, llms.WithJSONMode())
	}
	start := time.Now()
	resp, err := a.model.GenerateContent(ctx, msgs, opts...)
	took := time.Since(start)
	if err != nil {
		return Reply{}, took, err
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return Reply{}, took, ErrNoChoice
	}
	c := resp.Choices[0]
	r := Reply{Text: c.Content, ToolCalls: c.ToolCalls, StopReason: c.StopReason}
	in, okIn := intInfo(c.GenerationInfo, "PromptTokens", "input_tokens", "InputTokens")
	out, okOut := intInfo(c.GenerationInfo, "CompletionTokens", "output_tokens", "OutputTokens")
	if !okOut {
		out = EstimateTokens(c.Content) + toolCallTokens(c.ToolCalls)
	}
	if !okIn {
		in = 0
		for _, m := range msgs {
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					in += EstimateTokens(t.Text)
				}
			}
		}
	}
	r.InputTokens, r.OutputTokens, r.Estimated = in, out, !okOut
	return r, took, nil
}

// intInfo reads the first of keys that GenerationInfo holds as a number.
// Providers disagree on names and types (OpenAI: int "CompletionTokens";
// Anthropic: int "OutputTokens"; Ollama: "CompletionTokens").
func intInfo(info map[string]any, keys ...string) (int, bool) {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return v, true
		case int32:
			return int(v), true
		case int64:
			return int(v), true
		case float64:
			return int(v), true
		}
	}
	return 0, false
}

// EstimateTokens is the token count mdap uses where a provider reports
// none, and the one the simulated model reports: ceil(len(s)/4), four
// bytes a token. It never downloads anything, unlike llms.CountTokens.
// Cost: O(1).
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

func toolCallTokens(calls []llms.ToolCall) int {
	n := 0
	for _, c := range calls {
		if c.FunctionCall != nil {
			n += EstimateTokens(c.FunctionCall.Name) + EstimateTokens(c.FunctionCall.Arguments)
		}
	}
	return n
}
