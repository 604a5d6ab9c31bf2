// Package replyfile reads a model reply saved in a file (a text, native
// tool calls, an OpenAI chat completion or an Anthropic message) as a
// maker.Reply, for inspect.Reply (maker/inspect): what `maker parse` checks offline.
package replyfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/internal/toolcall"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// Read reads a model reply saved in a file named name, for
// [inspect.Reply]; name's extension decides how. A ".json" file may hold native tool calls (an
// array of calls, or one, in the OpenAI wire shape
// {"id", "type": "function", "function": {"name", "arguments"}}), a whole
// OpenAI chat completion ({"choices": [{"message": {"content",
// "tool_calls"}, "finish_reason"}], "usage"}) or an Anthropic message
// ({"content": [{"type": "text"|"tool_use", ...}], "stop_reason",
// "usage"}): its text, tool calls, stop reason and token usage are read.
// Any other content, and any other file, is the reply's text. Token
// figures the file does not give are estimated as the solver estimates
// them ([maker.Reply].Estimated).
//
// Errors: [maker.ErrNoChoice] for a chat completion without a choice. Cost:
// linear in b.
func Read(name string, b []byte) (maker.Reply, error) {
	if strings.EqualFold(filepath.Ext(name), ".json") {
		if r, ok, err := structuredReply(b); ok || err != nil {
			return r, err
		}
	}
	return withEstimate(maker.Reply{Text: string(b)}), nil
}

// withEstimate fills in token figures the way the solver does when a
// provider reports none.
func withEstimate(r maker.Reply) maker.Reply {
	if r.OutputTokens == 0 && !r.Estimated {
		r.OutputTokens = maker.EstimateReplyTokens(r.Text, r.ToolCalls)
		r.Estimated = true
	}
	return r
}

// structuredReply reads the JSON shapes of Read; ok is false when b
// is none of them.
func structuredReply(b []byte) (r maker.Reply, ok bool, err error) {
	trimmed := bytes.TrimSpace(b)
	switch {
	case bytes.HasPrefix(trimmed, []byte("[")):
		var calls []toolcall.Call
		if json.Unmarshal(trimmed, &calls) != nil {
			return r, false, nil
		}
		for _, c := range calls {
			if c.Function == nil {
				return r, false, nil
			}
			r.ToolCalls = append(r.ToolCalls, c.LLM())
		}
		r.StopReason = "tool_calls"
		return withEstimate(r), true, nil
	case bytes.HasPrefix(trimmed, []byte("{")):
	default:
		return r, false, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(trimmed, &obj) != nil {
		return r, false, nil
	}
	if _, isCall := obj["function"]; isCall {
		var c toolcall.Call
		if json.Unmarshal(trimmed, &c) != nil || c.Function == nil {
			return r, false, nil
		}
		r.ToolCalls, r.StopReason = []llms.ToolCall{c.LLM()}, "tool_calls"
		return withEstimate(r), true, nil
	}
	if _, isCompletion := obj["choices"]; isCompletion {
		var resp struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct {
					Content   *string         `json:"content"`
					ToolCalls []toolcall.Call `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(trimmed, &resp) != nil {
			return r, false, nil
		}
		if len(resp.Choices) == 0 {
			return r, true, fmt.Errorf("%w: the chat completion has no choices", maker.ErrNoChoice)
		}
		c := resp.Choices[0]
		if c.Message.Content != nil {
			r.Text = *c.Message.Content
		}
		for _, w := range c.Message.ToolCalls {
			if w.Function != nil {
				r.ToolCalls = append(r.ToolCalls, w.LLM())
			}
		}
		r.StopReason = c.FinishReason
		if resp.Usage != nil {
			r.InputTokens, r.OutputTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
			return r, true, nil
		}
		return withEstimate(r), true, nil
	}
	if content, isMessage := obj["content"]; isMessage && bytes.HasPrefix(bytes.TrimSpace(content), []byte("[")) {
		var msg struct {
			Content []struct {
				Type  string          `json:"type"`
				Text  string          `json:"text"`
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
			StopReason string `json:"stop_reason"`
			Usage      *struct {
				InputTokens  int `json:"input_tokens"`
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(trimmed, &msg) != nil {
			return r, false, nil
		}
		var text strings.Builder
		for _, part := range msg.Content {
			switch part.Type {
			case "text":
				text.WriteString(part.Text)
			case "tool_use":
				args := string(part.Input)
				if len(bytes.TrimSpace(part.Input)) == 0 {
					args = ""
				}
				r.ToolCalls = append(r.ToolCalls, llms.ToolCall{ID: part.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: part.Name, Arguments: args}})
			default:
				return r, false, nil
			}
		}
		r.Text, r.StopReason = text.String(), msg.StopReason
		if msg.Usage != nil {
			r.InputTokens, r.OutputTokens = msg.Usage.InputTokens, msg.Usage.OutputTokens
			return r, true, nil
		}
		return withEstimate(r), true, nil
	}
	return r, false, nil
}

// MaxBytes bounds one reply Load reads: far above any model's reply.
const MaxBytes = 16 << 20

// Load reads the reply saved in the file name, or in stdin when name is
// "-" (read as a ".json" file would be, so that a piped chat completion
// or tool calls are recognised), as Read does. A FIFO or a device is
// refused at once, without blocking; so is a reply over MaxBytes. Errors
// name the file and say how to fix it; Read's are wrapped. Cost: one
// read of at most MaxBytes+1 bytes.
func Load(name string, stdin io.Reader) (maker.Reply, error) {
	r, asName := stdin, "stdin.json"
	if name != "-" {
		f, err := safefile.Open(name) // a FIFO or a device is refused at once
		if err != nil {
			return maker.Reply{}, fmt.Errorf("%w: give a file holding one reply", err)
		}
		defer f.Close()
		r, asName = f, name
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return maker.Reply{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > MaxBytes {
		return maker.Reply{}, fmt.Errorf("%s is over %d bytes: one reply is far smaller", name, MaxBytes)
	}
	reply, err := Read(asName, b)
	if err != nil {
		return maker.Reply{}, fmt.Errorf("%s: %w", name, err)
	}
	return reply, nil
}
