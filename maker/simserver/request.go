package simserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tmc/langchaingo/llms"
)

// errRequest is wrapped by every error of parseRequest: the body is not a
// chat completion request this server answers. The handler answers it with
// 400 and the message, which names the field.
var errRequest = errors.New("invalid request")

// Bounds of a request, against replies too large to build: a red-flag
// reply can be 1.5 times the token cap, four bytes a token, per choice.
const (
	// MaxChoices is the largest n a request may ask for (OpenAI's own
	// limit).
	MaxChoices = 128
	// MaxTokensLimit is the largest max_tokens or max_completion_tokens a
	// request may give.
	MaxTokensLimit = 1 << 17
	// maxReplyTokens bounds n times the effective cap.
	maxReplyTokens = 1 << 20
)

// chatRequest is the part of an OpenAI chat completion request this server
// reads. Other fields (top_p, stop, user, metadata, ...) are accepted and
// ignored, as a simulated model has no use for them; what it cannot honour
// (stream, a response_format other than text, a tool_choice that forces a
// call, logprobs) is refused (400), never ignored.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	N                   *int            `json:"n"`
	Seed                *int64          `json:"seed"`
	Stream              bool            `json:"stream"`
	ResponseFormat      *responseFormat `json:"response_format"`
	Tools               []chatTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	Logprobs            bool            `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`

	// Filled by parseRequest.
	maxTokens int             // the effective cap, 0 for none
	n         int             // choices, 1 or more
	declared  map[string]bool // the declared function names
	noTools   bool            // tool_choice "none"
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// roles maps the OpenAI roles to langchaingo's.
var roles = map[string]llms.ChatMessageType{
	"system":    llms.ChatMessageTypeSystem,
	"developer": llms.ChatMessageTypeSystem,
	"user":      llms.ChatMessageTypeHuman,
	"assistant": llms.ChatMessageTypeAI,
	"tool":      llms.ChatMessageTypeTool,
	"function":  llms.ChatMessageTypeFunction,
}

// requestErr is an errRequest about param.
type requestErr struct {
	param string
	msg   string
}

func (e *requestErr) Error() string {
	if e.param == "" {
		return e.msg
	}
	return e.param + ": " + e.msg
}

func (e *requestErr) Unwrap() error { return errRequest }

func badParam(param, format string, a ...any) error {
	return &requestErr{param: param, msg: fmt.Sprintf(format, a...)}
}

// parseRequest reads and checks a chat completion request body. Errors
// wrap errRequest and name the field (a *requestErr). Cost: linear in
// len(body); it never panics.
func parseRequest(body []byte) (*chatRequest, error) {
	var req chatRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, badParam(te.Field, "%s, want %s", te.Value, te.Type)
		}
		return nil, badParam("", "the body is not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badParam("", "more data after the request object")
	}
	if req.Stream {
		return nil, badParam("stream", "streaming is not supported by the simulated server; send stream false or leave it out")
	}
	if f := req.ResponseFormat; f != nil && f.Type != "" && f.Type != "text" {
		return nil, badParam("response_format", "%q: structured output is not supported by the simulated server (it would answer prose); leave response_format out or send {\"type\": \"text\"}", f.Type)
	}
	if req.Logprobs {
		return nil, badParam("logprobs", "the simulated model has no token probabilities; send logprobs false or leave it out")
	}
	if req.TopLogprobs != nil {
		return nil, badParam("top_logprobs", "the simulated model has no token probabilities; leave top_logprobs out")
	}
	if len(req.Messages) == 0 {
		return nil, badParam("messages", "at least one message is required")
	}
	for i, m := range req.Messages {
		if _, ok := roles[m.Role]; !ok {
			return nil, badParam(fmt.Sprintf("messages[%d].role", i), "%q, want system, developer, user, assistant, tool or function", m.Role)
		}
		if _, err := contentTexts(m.Content); err != nil {
			return nil, badParam(fmt.Sprintf("messages[%d].content", i), "%v", err)
		}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if f.v != nil && (*f.v < 1 || *f.v > MaxTokensLimit) {
			return nil, badParam(f.name, "%d, want 1 to %d (or leave it out)", *f.v, MaxTokensLimit)
		}
	}
	switch {
	case req.MaxCompletionTokens != nil:
		req.maxTokens = *req.MaxCompletionTokens // the current field wins
	case req.MaxTokens != nil:
		req.maxTokens = *req.MaxTokens
	}
	if t := req.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return nil, badParam("temperature", "%v, want 0 to 2", *t)
	}
	req.n = 1
	if req.N != nil {
		if *req.N < 1 || *req.N > MaxChoices {
			return nil, badParam("n", "%d, want 1 to %d", *req.N, MaxChoices)
		}
		req.n = *req.N
	}
	if limit := max(req.maxTokens, defaultCap); req.n*limit > maxReplyTokens {
		return nil, badParam("n", "%d choices of up to %d tokens each exceed this server's %d tokens a request; ask for fewer choices or a lower max_tokens", req.n, limit, maxReplyTokens)
	}
	req.declared = map[string]bool{}
	for i, t := range req.Tools {
		if t.Type != "function" {
			return nil, badParam(fmt.Sprintf("tools[%d].type", i), "%q, want \"function\"", t.Type)
		}
		if t.Function.Name == "" {
			return nil, badParam(fmt.Sprintf("tools[%d].function.name", i), "empty")
		}
		req.declared[t.Function.Name] = true
	}
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" {
		var s string
		if json.Unmarshal(req.ToolChoice, &s) == nil {
			switch s {
			case "none":
				req.noTools = true
			case "auto":
			case "required":
				return nil, badParam("tool_choice", "%q: the simulated model cannot be made to call a tool (it replies as its script says); send auto or none", s)
			default:
				return nil, badParam("tool_choice", "%q, want none or auto", s)
			}
		} else if json.Unmarshal(req.ToolChoice, &map[string]json.RawMessage{}) != nil {
			return nil, badParam("tool_choice", "want a string or an object")
		} else {
			return nil, badParam("tool_choice", "a named function: the simulated model cannot be made to call a tool (it replies as its script says); send auto or none")
		}
	}
	return &req, nil
}

// contentTexts returns the text parts of a message's content: a string
// (one part), null or absent (none), or an array of parts of which those
// of type "text" count and the others (images, audio, files) are left out.
func contentTexts(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []string{s}, nil
	}
	var parts []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, errors.New("want a string, an array of content parts or null")
	}
	var out []string
	for i, p := range parts {
		var typ string
		if err := json.Unmarshal(p["type"], &typ); err != nil {
			return nil, fmt.Errorf("part %d has no string \"type\"", i)
		}
		if typ != "text" {
			continue
		}
		var text string
		if err := json.Unmarshal(p["text"], &text); err != nil {
			return nil, fmt.Errorf("text part %d has no string \"text\"", i)
		}
		out = append(out, text)
	}
	return out, nil
}

// messages turns the request's messages into langchaingo's, as its OpenAI
// client would have built them: each text part a TextContent, in order, so
// that sim.PromptText reads the same prompt as the client's own messages
// give. A tool (or function) message's content is text too, since a model
// reads the tool's result; an assistant's tool calls are ToolCall parts.
func (r *chatRequest) messages() []llms.MessageContent {
	out := make([]llms.MessageContent, 0, len(r.Messages))
	for _, m := range r.Messages {
		texts, _ := contentTexts(m.Content) // checked by parseRequest
		mc := llms.MessageContent{Role: roles[m.Role]}
		for _, t := range texts {
			mc.Parts = append(mc.Parts, llms.TextContent{Text: t})
		}
		for _, c := range m.ToolCalls {
			mc.Parts = append(mc.Parts, llms.ToolCall{ID: c.ID, Type: c.Type, FunctionCall: &llms.FunctionCall{Name: c.Function.Name, Arguments: c.Function.Arguments}})
		}
		out = append(out, mc)
	}
	return out
}

// responseFormat is a request's response_format; only its type is read.
type responseFormat struct {
	Type string `json:"type"`
}
