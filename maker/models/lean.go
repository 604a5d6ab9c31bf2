package models

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/internal/jsonstr"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// The lean OpenAI path. langchaingo's OpenAI client compiles a regular
// expression per model pattern on every call (getModelCapabilities, about
// 30µs), marshals the whole request through reflection although a step's
// samples differ only in temperature and seed, and decodes replies into a
// large structure. For the calls a voting run makes (text messages; the
// temperature, reply cap, seed and JSON mode; nothing else) the model
// sends the request itself: the messages encoded once per step and kept,
// the few fields that vary appended around them, the reply decoded into
// the fields mdap reads; several choices (n, for Solver.SamplesPerCall)
// included. Every other call (tools, a schema, streaming, stop words,
// non-text parts, any option it does not know) goes through langchaingo
// as before. The reply has the shape
// langchaingo's gives (GenerationInfo under the same keys), and HTTP
// errors are seen by the same transport, so classify treats both alike.

// leanChat is the lean path of one OpenAI-compatible model.
type leanChat struct {
	client *http.Client // with no Timeout: generate puts timeout in the context
	// rt is client's RoundTripper, which do calls directly when direct
	// is true; urlText is the URL as http.Client's errors write it.
	rt      http.RoundTripper
	direct  bool
	urlText string
	// tmpl is the request every call on the direct path copies (see
	// request): its URL parsed and its headers set once. net/http only
	// reads a request's URL and headers, so the copies share them.
	tmpl      *http.Request
	timeout   time.Duration
	url       string // .../chat/completions
	key       string
	model     string
	legacyMax bool // max_tokens rather than max_completion_tokens
	memo      atomic.Pointer[leanMemo]
	// The request headers' values, built once and shared by every
	// request (net/http only reads them; Client.Do copies the header).
	contentType, authorization []string
	prefix                     []byte // {"model":MODEL,"messages":
}

// leanMemo is a request's messages and their JSON, each message's JSON
// object kept too: the solver sends every sample of a step the same
// messages, and a task's next step usually repeats its system prompt.
type leanMemo struct {
	roles []llms.ChatMessageType
	texts []string
	parts [][]byte // each message's JSON object
	size  int      // the length of the parts' JSON array: [a,b]
	// The three slices' backing arrays for a request of up to
	// memoRoom messages (a voting step's usual system and user
	// messages), in the memo's own allocation.
	roleRoom [memoRoom]llms.ChatMessageType
	textRoom [memoRoom]string
	partRoom [memoRoom][]byte
}

// memoRoom is the number of messages a leanMemo holds without
// allocating its slices apart.
const memoRoom = 4

// newLeanChat returns the lean path over rt, each call bounded by timeout.
func newLeanChat(rt http.RoundTripper, timeout time.Duration, base, key, model string, legacyMax bool) *leanChat {
	l := &leanChat{client: &http.Client{Transport: rt}, rt: rt, timeout: timeout, url: strings.TrimSuffix(base, "/") + "/chat/completions", key: key, model: model, legacyMax: legacyMax}
	// A URL with credentials in it (the client hides the password in its
	// errors) or that does not parse goes through the client.
	l.contentType = []string{"application/json"}
	l.prefix = append(jsonstr.Append([]byte(`{"model":`), model), `,"messages":`...)
	if key != "" {
		l.authorization = []string{"Bearer " + key}
	}
	if u, err := url.Parse(l.url); err == nil && u.User == nil {
		// What http.NewRequestWithContext makes of the URL, once.
		if tmpl, err := http.NewRequest(http.MethodPost, l.url, nil); err == nil {
			l.direct, l.urlText, l.tmpl = true, u.String(), tmpl
			l.setHeaders(tmpl.Header)
		}
	}
	return l
}

// leanOptions are the CallOptions fields the lean path sends; any other
// field set sends the call through langchaingo.
var leanOptions = map[string]bool{"Temperature": true, "MaxTokens": true, "Seed": true, "JSONMode": true, "Metadata": true, "N": true}

// otherOptions are the indices of the CallOptions fields not in
// leanOptions.
var otherOptions = func() []int {
	var out []int
	t := reflect.TypeFor[llms.CallOptions]()
	for i := range t.NumField() {
		if !leanOptions[t.Field(i).Name] {
			out = append(out, i)
		}
	}
	return out
}()

// accepts returns the call's options when the lean path can send it
// exactly as langchaingo would.
func (l *leanChat) accepts(msgs []llms.MessageContent, opts []llms.CallOption) (llms.CallOptions, bool) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	for k := range o.Metadata {
		if k != "openai:use_legacy_max_tokens" {
			return o, false
		}
	}
	v := reflect.ValueOf(&o).Elem() // no copy of o boxed per call
	for _, i := range otherOptions {
		if !v.Field(i).IsZero() {
			return o, false
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case llms.ChatMessageTypeSystem, llms.ChatMessageTypeHuman, llms.ChatMessageTypeAI, llms.ChatMessageTypeGeneric:
		default:
			return o, false
		}
		if len(m.Parts) != 1 {
			return o, false
		}
		if _, ok := m.Parts[0].(llms.TextContent); !ok {
			return o, false
		}
	}
	return o, true
}

// messages returns the memo of msgs, whose parts make their JSON array
// (see appendMessages): the last call's when the messages are its, else
// one with each message the last call had at the same place reused
// (strings that share their bytes compare in O(1)) and the others
// encoded.
func (l *leanChat) messages(msgs []llms.MessageContent) *leanMemo {
	pm := l.memo.Load()
	if pm != nil && len(pm.texts) == len(msgs) {
		same := true
		for i, m := range msgs {
			if m.Role != pm.roles[i] || m.Parts[0].(llms.TextContent).Text != pm.texts[i] {
				same = false
				break
			}
		}
		if same {
			return pm
		}
	}
	next := &leanMemo{}
	if len(msgs) <= memoRoom {
		next.roles, next.texts, next.parts = next.roleRoom[:len(msgs)], next.textRoom[:len(msgs)], next.partRoom[:len(msgs)]
	} else {
		next.roles, next.texts, next.parts = make([]llms.ChatMessageType, len(msgs)), make([]string, len(msgs)), make([][]byte, len(msgs))
	}
	next.size = 2
	for i, m := range msgs {
		text := m.Parts[0].(llms.TextContent).Text
		next.roles[i], next.texts[i] = m.Role, text
		if pm != nil && i < len(pm.texts) && pm.roles[i] == m.Role && pm.texts[i] == text {
			next.parts[i] = pm.parts[i]
		} else {
			// Room for the escapes of a prompt's newlines and quotes,
			// so that encoding it is one allocation.
			next.parts[i] = appendMessage(make([]byte, 0, len(text)+len(text)/8+48), m.Role, text)
		}
		next.size += len(next.parts[i])
		if i > 0 {
			next.size++ // the comma before it
		}
	}
	l.memo.Store(next)
	return next
}

// appendMessages appends the JSON array of the memo's messages, byte for
// byte what json.Marshal writes of them as langchaingo's client sends
// them (role and content; jsonstr escapes as encoding/json does).
func (pm *leanMemo) appendMessages(b []byte) []byte {
	b = append(b, '[')
	for i, part := range pm.parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, part...)
	}
	return append(b, ']')
}

// appendMessage appends a message's JSON object as json.Marshal writes
// langchaingo's: {"role":...,"content":...}, the role OpenAI's name of
// the message type.
func appendMessage(b []byte, role llms.ChatMessageType, text string) []byte {
	name := openai.RoleUser
	switch role {
	case llms.ChatMessageTypeSystem:
		name = openai.RoleSystem
	case llms.ChatMessageTypeAI:
		name = openai.RoleAssistant
	}
	b = append(b, `{"role":`...)
	b = jsonstr.Append(b, name)
	b = append(b, `,"content":`...)
	b = jsonstr.Append(b, text)
	return append(b, '}')
}

// body encodes a request the way langchaingo's client does for the
// options accepts lets through.
func (l *leanChat) body(msgs []llms.MessageContent, o llms.CallOptions) []byte {
	pm := l.messages(msgs)
	// The model's own WithLegacyMaxTokensField comes after the call's
	// options and wins (langchaingo's order); without it, the call's
	// metadata decides.
	legacy := l.legacyMax
	if v, ok := o.Metadata["openai:use_legacy_max_tokens"].(bool); ok && !legacy {
		legacy = v
	}
	b := make([]byte, 0, len(l.prefix)+pm.size+160)
	b = append(b, l.prefix...)
	b = pm.appendMessages(b)
	b = append(b, `,"temperature":`...)
	b = strconv.AppendFloat(b, o.Temperature, 'g', -1, 64)
	if o.MaxTokens > 0 {
		if legacy {
			b = append(b, `,"max_tokens":`...)
		} else {
			b = append(b, `,"max_completion_tokens":`...)
		}
		b = strconv.AppendInt(b, int64(o.MaxTokens), 10)
	}
	if o.N > 0 {
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(o.N), 10)
	}
	if o.Seed != 0 {
		b = append(b, `,"seed":`...)
		b = strconv.AppendInt(b, int64(o.Seed), 10)
	}
	if o.JSONMode {
		b = append(b, `,"response_format":{"type":"json_object"}`...)
	}
	return append(b, '}')
}

// leanReply is the part of a chat completion mdap reads.
type leanReply struct {
	Choices []leanChoice `json:"choices"`
	Usage   leanUsage    `json:"usage"`
}

type leanChoice struct {
	Message      leanMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type leanMessage struct {
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	ToolCalls        []leanToolCall `json:"tool_calls"`
	FunctionCall     *leanFunction  `json:"function_call"` // the legacy call, read as langchaingo does
}

type leanToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function leanFunction `json:"function"`
}

type leanFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type leanUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

// replyBuffers hold reply bodies while they are decoded.
var replyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxReplyBody bounds a reply body read by the lean path: a reply text is
// judged only up to maker.MaxReplyBytes.
const maxReplyBody = 4*maker.MaxReplyBytes + 64<<10

// generate sends one call on the lean path. Errors: the transport's, an
// HTTP status of 400 or more ("HTTP n", which classify explains from what
// the transport saw), a body that does not decode, and
// openai.ErrEmptyResponse for a reply without a choice, as langchaingo's.
func (l *leanChat) generate(ctx context.Context, msgs []llms.MessageContent, o llms.CallOptions) (*llms.ContentResponse, error) {
	body := l.body(msgs, o)
	if l.timeout > 0 {
		// The timeout as a deadline on the call's context, not as
		// http.Client.Timeout: over a RoundTripper other than
		// *http.Transport (the observing transport), the client enforces
		// its Timeout with a goroutine and a timer per request, and the
		// transport turns the Request.Cancel it sets into another
		// goroutine. A deadline bounds the same thing (connecting,
		// sending, the headers, reading the body) with one timer.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.timeout)
		defer cancel()
	}
	req, err := l.request(ctx, body)
	if err != nil {
		return nil, err
	}
	resp, err := l.do(req, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	buf := replyBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer replyBuffers.Put(buf)
	if err := readReply(buf, resp.Body, maxReplyBody); err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var r leanReply
	var room [2]leanChoice // a reply of one or two choices decodes into it
	r.Choices = room[:0]
	if !decodeLeanReply(buf.Bytes(), &r) {
		// A decoder, as langchaingo's: what follows the first JSON value
		// is ignored there too.
		var slow leanReply
		if err := json.NewDecoder(bytes.NewReader(buf.Bytes())).Decode(&slow); err != nil {
			return nil, fmt.Errorf("the reply is not a chat completion: %w", err)
		}
		r = slow
	}
	if len(r.Choices) == 0 {
		return nil, openai.ErrEmptyResponse
	}
	return leanResponse(&r), nil
}

// request returns the POST of body to the model's URL with ctx, as
// http.NewRequestWithContext makes it (its Body, GetBody and
// ContentLength those of a *bytes.Reader of body) with the lean path's
// headers. On the direct path it is a copy of tmpl: no URL is parsed and
// no header map made per call.
func (l *leanChat) request(ctx context.Context, body []byte) (*http.Request, error) {
	if l.tmpl == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		l.setHeaders(req.Header)
		return req, nil
	}
	req := l.tmpl.WithContext(ctx)
	// NewRequestWithContext's body: the NopCloser of a *bytes.Reader
	// (net/http writes it with the headers, as a reader it knows), and a
	// GetBody for a request sent again.
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return req, nil
}

// setHeaders sets the lean path's request headers in h.
func (l *leanChat) setHeaders(h http.Header) {
	h["Content-Type"] = l.contentType
	if l.authorization != nil {
		h["Authorization"] = l.authorization
	}
}

// readReply appends what r gives to buf, up to limit bytes, until io.EOF,
// as buf.ReadFrom(io.LimitReader(r, limit)) does without allocating the
// LimitedReader; the read's error other than io.EOF.
func readReply(buf *bytes.Buffer, r io.Reader, limit int) error {
	// The limit is on the bytes read, as LimitReader's, not on buf's
	// length: buf may hold bytes already.
	end := buf.Len() + limit
	for buf.Len() < end {
		buf.Grow(bytes.MinRead)
		b := buf.AvailableBuffer()
		n, err := r.Read(b[:min(cap(b), end-buf.Len())])
		buf.Write(b[:n])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// do sends req (whose body is body) and returns the response, as
// http.Client.Do does for it: the client has no Timeout, no cookie jar and
// no redirect policy, and the URL no credentials, so the client's part of
// a request that is not redirected is to call the RoundTripper and wrap
// its error in a *url.Error ("Post" and the URL). do does that itself,
// without the client's copy of the request's headers (kept for
// redirects) and its other allocations. A redirect answer (a 3xx status
// with a Location) is dropped and the request sent again through the
// client, which follows it as langchaingo's client would.
func (l *leanChat) do(req *http.Request, body []byte) (*http.Response, error) {
	if !l.direct {
		return l.client.Do(req)
	}
	resp, err := l.rt.RoundTrip(req)
	if err != nil {
		// As the client: an HTTP answer to a TLS hello is a scheme
		// mismatch (https:// to a plain server), not a TLS failure.
		if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch
		}
		return nil, &url.Error{Op: "Post", URL: l.urlText, Err: err}
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if resp.Header.Get("Location") == "" {
			return resp, nil
		}
		// As the client does before it follows: read a little, so that
		// a small body lets the connection be reused.
		_, _ = io.CopyN(io.Discard, resp.Body, 2<<10)
		resp.Body.Close()
		again, err := http.NewRequestWithContext(req.Context(), http.MethodPost, l.url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		again.Header = req.Header
		return l.client.Do(again)
	}
	return resp, nil
}

// leanResponse is the response langchaingo's OpenAI client makes of r,
// which has a choice at least. A response of one or two choices is one
// allocation (the response, its choice pointers and the choices
// together), and GenerationInfo maps are made as generationInfos says.
func leanResponse(r *leanReply) *llms.ContentResponse {
	var resp *llms.ContentResponse
	var choices []llms.ContentChoice
	switch len(r.Choices) {
	case 1:
		x := new(struct {
			resp llms.ContentResponse
			ptrs [1]*llms.ContentChoice
			vals [1]llms.ContentChoice
		})
		resp, choices, x.resp.Choices = &x.resp, x.vals[:], x.ptrs[:]
	case 2:
		x := new(struct {
			resp llms.ContentResponse
			ptrs [2]*llms.ContentChoice
			vals [2]llms.ContentChoice
		})
		resp, choices, x.resp.Choices = &x.resp, x.vals[:], x.ptrs[:]
	default:
		resp = &llms.ContentResponse{Choices: make([]*llms.ContentChoice, len(r.Choices))}
		choices = make([]llms.ContentChoice, len(r.Choices))
	}
	infos := newGenerationInfos(&r.Usage)
	for i := range r.Choices {
		c := &r.Choices[i]
		ch := &choices[i]
		*ch = llms.ContentChoice{
			Content: c.Message.Content, ReasoningContent: c.Message.ReasoningContent, StopReason: c.FinishReason,
			GenerationInfo: infos.info(c.Message.ReasoningContent),
		}
		if fc := c.Message.FunctionCall; c.FinishReason == "function_call" && fc != nil {
			// langchaingo's reading (it panics when the call is absent).
			ch.FuncCall = &llms.FunctionCall{Name: fc.Name, Arguments: fc.Arguments}
		}
		for _, tc := range c.Message.ToolCalls {
			ch.ToolCalls = append(ch.ToolCalls, llms.ToolCall{ID: tc.ID, Type: tc.Type,
				FunctionCall: &llms.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
		if len(ch.ToolCalls) > 0 {
			ch.FuncCall = ch.ToolCalls[0].FunctionCall
		}
		resp.Choices[i] = ch
	}
	return resp
}

// generationInfos makes the GenerationInfo maps of a reply's choices as
// langchaingo's OpenAI client fills them: the reply's usage under its
// twelve keys, and the choice's reasoning. Each choice gets a map of its
// own, as langchaingo's; the usage's counts are boxed once for all of
// them and all keys (langchaingo boxes eight per map; an interface
// holding an int is immutable, so sharing one is not seen).
type generationInfos struct {
	completion, prompt, total, reasoningTokens, promptAudio, cached,
	completionAudio, accepted, rejected any
}

func newGenerationInfos(u *leanUsage) generationInfos {
	return generationInfos{
		completion: u.CompletionTokens, prompt: u.PromptTokens, total: u.TotalTokens,
		reasoningTokens: u.CompletionTokensDetails.ReasoningTokens, promptAudio: u.PromptTokensDetails.AudioTokens,
		cached: u.PromptTokensDetails.CachedTokens, completionAudio: u.CompletionTokensDetails.AudioTokens,
		accepted: u.CompletionTokensDetails.AcceptedPredictionTokens, rejected: u.CompletionTokensDetails.RejectedPredictionTokens,
	}
}

// info returns a new GenerationInfo map for a choice with reasoning.
func (g *generationInfos) info(reasoning string) map[string]any {
	return map[string]any{
		"CompletionTokens":                   g.completion,
		"PromptTokens":                       g.prompt,
		"TotalTokens":                        g.total,
		"ReasoningTokens":                    g.reasoningTokens,
		"PromptAudioTokens":                  g.promptAudio,
		"ThinkingContent":                    reasoning,
		"ThinkingTokens":                     g.reasoningTokens,
		"PromptCachedTokens":                 g.cached,
		"CompletionAudioTokens":              g.completionAudio,
		"CompletionReasoningTokens":          g.reasoningTokens,
		"CompletionAcceptedPredictionTokens": g.accepted,
		"CompletionRejectedPredictionTokens": g.rejected,
	}
}

// send sends a call on the lean path when it can, else through llm with
// the model's extra options.
func (m *model) send(ctx context.Context, llm llms.Model, structured bool, msgs []llms.MessageContent, opts []llms.CallOption) (*llms.ContentResponse, error) {
	if m.lean != nil && !structured {
		// Without m.extra: the lean path's legacyMax is the one option
		// extra can hold (see Open), applied in body as extra would be.
		if o, ok := m.lean.accepts(msgs, opts); ok {
			return m.lean.generate(ctx, msgs, o)
		}
	}
	return llm.GenerateContent(ctx, msgs, append(opts[:len(opts):len(opts)], m.extra...)...)
}
