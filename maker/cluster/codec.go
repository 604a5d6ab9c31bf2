package cluster

import (
	"encoding/json"
	"strconv"

	"github.com/mdap-go/mdap/internal/jsonstr"
	"github.com/tmc/langchaingo/llms"
)

// The JSON of a job is on every wave's critical path twice (the
// coordinator encodes it, the worker decodes it) and is mostly the
// prompt. Through encoding/json and langchaingo's marshalers a prompt's
// text is passed over several times (each nested MarshalJSON's output is
// validated and compacted again by its caller, a text part goes through
// a map; each nested UnmarshalJSON rescans its input). The fast paths
// below write the bytes encoding/json writes and read the values it
// reads for the common case, prompts of text parts only, without the
// nesting, and hand everything else to encoding/json
// (TestJobCodecMatchesEncodingJSON, FuzzJobCodec). Measured in CPU time
// on a 6-disk Hanoi job of three samples (2.4 KB): encoding 62 -> 12 µs,
// decoding 61 -> 38 µs.

// encodeJob is json.Marshal(job), in one pass over the prompts when
// every part is text. It writes Job's fields one by one: a field added
// to Job must be added here (TestJobCodecMatchesEncodingJSON checks the
// count).
func encodeJob(job *Job) ([]byte, error) {
	size := 256
	for _, msgs := range job.Prompts {
		for _, m := range msgs {
			for _, p := range m.Parts {
				t, ok := p.(llms.TextContent)
				if !ok {
					return json.Marshal(job)
				}
				size += len(t.Text) + 32
			}
		}
	}
	opts, err := json.Marshal(job.Options)
	if err != nil {
		return nil, err
	}
	samples, err := json.Marshal(job.Samples)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, size+len(opts)+len(samples))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(job.Version), 10)
	b = append(b, `,"id":`...)
	b = jsonstr.Append(b, job.ID)
	b = append(b, `,"route":`...)
	b = jsonstr.Append(b, job.Route)
	b = append(b, `,"reply_to":`...)
	b = jsonstr.Append(b, job.ReplyTo)
	if job.Lease != "" {
		b = append(b, `,"lease":`...)
		b = jsonstr.Append(b, job.Lease)
	}
	b = append(b, `,"prompts":`...)
	b = appendPrompts(b, job.Prompts)
	b = append(b, `,"options":`...)
	b = append(b, opts...)
	b = append(b, `,"samples":`...)
	b = append(b, samples...)
	return append(b, '}'), nil
}

// appendPrompts writes prompts of text parts only as json.Marshal does.
func appendPrompts(b []byte, prompts [][]Message) []byte {
	if prompts == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, msgs := range prompts {
		if i > 0 {
			b = append(b, ',')
		}
		if msgs == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, m := range msgs {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendTextMessage(b, m)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// appendTextMessage writes m, whose parts are all llms.TextContent, as
// Message.MarshalJSON does (langchaingo writes a text part as a map:
// keys sorted).
func appendTextMessage(b []byte, m Message) []byte {
	b = append(b, `{"role":`...)
	b = jsonstr.Append(b, string(m.Role))
	b = append(b, `,"parts":[`...)
	for k, p := range m.Parts {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"text":`...)
		b = jsonstr.Append(b, p.(llms.TextContent).Text)
		b = append(b, `,"type":"text"}`...)
	}
	return append(b, "]}"...)
}

// textOnly reports whether every part of m is an llms.TextContent.
func textOnly(m Message) bool {
	for _, p := range m.Parts {
		if _, ok := p.(llms.TextContent); !ok {
			return false
		}
	}
	return true
}

// wirePart is a message part as langchaingo's MessageContent.UnmarshalJSON
// reads it (the same fields and types, so the same inputs decode).
type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	} `json:"image_url,omitempty"`
	Binary struct {
		Data     string `json:"data"`
		MIMEType string `json:"mime_type"`
	} `json:"binary,omitempty"`
	ID       string `json:"id"`
	ToolCall struct {
		ID           string             `json:"id"`
		Type         string             `json:"type"`
		FunctionCall *llms.FunctionCall `json:"function"`
	} `json:"tool_call"`
	ToolResponse struct {
		ToolCallID string `json:"tool_call_id"`
		Name       string `json:"name"`
		Content    string `json:"content"`
	} `json:"tool_response"`
}

// wireMessage is a message as langchaingo's MessageContent.UnmarshalJSON
// reads it.
type wireMessage struct {
	Role  llms.ChatMessageType `json:"role"`
	Text  string               `json:"text"`
	Parts []wirePart           `json:"parts"`
}

// textJob is a Job whose prompts decode without langchaingo's
// unmarshalers (its Prompts shadows the Job's).
type textJob struct {
	Job
	Prompts [][]wireMessage `json:"prompts"`
}

// unmarshalJob is json.Unmarshal(data, job): without langchaingo's
// unmarshalers when every part of the prompts is text, else (or on any
// error, for encoding/json's own verdict and message) through
// encoding/json and langchaingo. The one input on which the two may read
// different prompts repeats the prompts name in the job's object (JSON
// leaves repeated names undefined and no encoder of a Job writes one):
// encoding/json then merges the second list's messages into the first's
// where langchaingo's unmarshaler replaces them.
func unmarshalJob(data []byte, job *Job) error {
	var tj textJob
	if err := json.Unmarshal(data, &tj); err == nil {
		if prompts, ok := textPrompts(tj.Prompts); ok {
			*job = tj.Job
			job.Prompts = prompts
			return nil
		}
	}
	*job = Job{}
	return json.Unmarshal(data, job)
}

// textPrompts converts decoded prompts as langchaingo would, if every
// part is text; false otherwise.
func textPrompts(in [][]wireMessage) ([][]Message, bool) {
	if in == nil {
		return nil, true
	}
	out := make([][]Message, len(in))
	for i, msgs := range in {
		if msgs == nil {
			continue
		}
		out[i] = make([]Message, len(msgs))
		for j, wm := range msgs {
			m := Message{Role: wm.Role}
			for _, p := range wm.Parts {
				if p.Type != "text" && p.Type != "" {
					return nil, false
				}
				m.Parts = append(m.Parts, llms.TextContent{Text: p.Text})
			}
			if len(m.Parts) == 0 && wm.Text != "" {
				m.Parts = []llms.ContentPart{llms.TextContent{Text: wm.Text}}
			}
			out[i][j] = m
		}
	}
	return out, true
}
