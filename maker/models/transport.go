package models

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mdap-go/mdap/maker"
)

// The transport sits under langchaingo's clients, which stay the only
// code that speaks a provider's protocol. It observes each call (the URL,
// the status, the headers, an error body, the transport's own error: what
// langchaingo's errors drop), reads Ollama's reply stream as it passes
// (its final "done" line, its done_reason and token counts, which
// langchaingo's Ollama client ignores), and puts an answer schema in an
// Ollama request's "format", which langchaingo can only send as a string.

// errBodyLimit bounds the part of an error body kept for messages.
const errBodyLimit = 8 << 10

// call is what the transport saw of one GenerateContent call. The
// goroutine that makes the call reads it (snapshot) after the call
// returned; the mutex covers a body read or closed from elsewhere.
type call struct {
	mu sync.Mutex
	seen
}

// seen is what a call saw.
type seen struct {
	url       *url.URL    // the last request's URL
	method    string      // and its method
	sendErr   error       // the transport's error: no response at all
	status    int         // the response's status
	header    http.Header // and headers
	errBody   []byte      // the first errBodyLimit bytes of an error body
	ollama    ollamaTail  // Ollama's reply stream, for /api/chat
	streamed  bool        // the reply stream was observed
	bytesRead int64
	readErr   error  // the error that ended the body, other than io.EOF
	head      []byte // the first headLimit bytes of a successful body, not streamed
}

// headLimit bounds what a call keeps of a successful reply's body: the
// response's id and model come first in OpenAI's and Anthropic's replies.
const headLimit = 4 << 10

// headBody keeps the first headLimit bytes read from a reply's body in its
// call, for responseMeta.
type headBody struct {
	rc io.ReadCloser
	c  *call
}

func (b *headBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.c.mu.Lock()
	if room := headLimit - len(b.c.head); room > 0 {
		b.c.head = append(b.c.head, p[:min(n, room)]...)
	}
	b.c.mu.Unlock()
	return n, err
}

func (b *headBody) Close() error { return b.rc.Close() }

// responseMeta reads the top-level "id" and "model" of a JSON reply from
// its first bytes, head: as many of the two as come before head ends or
// a value it cannot read.
func responseMeta(head []byte) (id, model string) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", ""
	}
	for (id == "" || model == "") && dec.More() {
		t, err := dec.Token()
		if err != nil {
			return id, model
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return id, model
		}
		switch t {
		case "id":
			_ = json.Unmarshal(v, &id)
		case "model":
			_ = json.Unmarshal(v, &model)
		}
	}
	return id, model
}

// ollamaTail is what Ollama's reply stream says about the reply: its final
// line carries done, done_reason and the counts.
type ollamaTail struct {
	lines      int
	done       bool
	doneReason string
	errText    string
}

type callKey struct{}

// withCall returns a new call and a context under ctx that carries it.
func withCall(ctx context.Context) (context.Context, *call) {
	c := &call{}
	return context.WithValue(ctx, callKey{}, c), c
}

// transport observes the calls whose context carries a *call.
type transport struct {
	base http.RoundTripper
	// ollama: observe /api/chat streams and send the answer schema.
	ollama bool
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*call)
	if c == nil {
		return t.base.RoundTrip(req)
	}
	chat := t.ollama && strings.HasSuffix(req.URL.Path, "/api/chat")
	if schema, ok := maker.AnswerSchemaFrom(req.Context()); ok && chat && req.Body != nil {
		r, err := withFormat(req, schema)
		if err != nil {
			return nil, err
		}
		req = r
	}
	c.mu.Lock()
	c.url, c.method = shownURL(req.URL), req.Method
	c.mu.Unlock()
	resp, err := t.base.RoundTrip(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.sendErr = err
		return nil, err
	}
	c.status, c.header = resp.StatusCode, resp.Header // read only, never changed
	switch {
	case resp.StatusCode >= 400:
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		c.errBody = b[:min(len(b), errBodyLimit)]
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{rerr}))
	case chat:
		c.streamed = true
		resp.Body = &observedBody{rc: resp.Body, c: c}
	case resp.StatusCode < 300:
		resp.Body = &headBody{rc: resp.Body, c: c}
	}
	return resp, nil
}

// errReader returns err, or io.EOF when err is nil.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// withFormat returns req with its JSON body's "format" set to schema:
// Ollama's structured output. langchaingo v0.1.14's Ollama client has
// only a string format (ollama.WithFormat, llms.WithJSONMode's "json"),
// and Ollama refuses a schema sent as a string.
func withFormat(req *http.Request, schema json.RawMessage) (*http.Request, error) {
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	body["format"] = schema
	if b, err = json.Marshal(body); err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return r, nil
}

// observedBody reads Ollama's NDJSON reply stream through, line by line.
type observedBody struct {
	rc   io.ReadCloser
	c    *call
	line []byte
}

func (o *observedBody) Read(p []byte) (int, error) {
	n, err := o.rc.Read(p)
	o.c.mu.Lock()
	defer o.c.mu.Unlock()
	o.c.bytesRead += int64(n)
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			o.line = append(o.line, chunk...)
			break
		}
		o.line = append(o.line, chunk[:i]...)
		o.endLine()
		chunk = chunk[i+1:]
	}
	if err == io.EOF {
		o.endLine() // a last line without its newline
	} else if err != nil && o.c.readErr == nil {
		o.c.readErr = err
	}
	return n, err
}

func (o *observedBody) endLine() {
	line := bytes.TrimSpace(o.line)
	o.line = o.line[:0]
	if len(line) == 0 {
		return
	}
	t := &o.c.ollama
	t.lines++
	var v struct {
		Done       bool   `json:"done"`
		DoneReason string `json:"done_reason"`
		Error      string `json:"error"`
	}
	if json.Unmarshal(line, &v) != nil {
		return
	}
	if v.Error != "" {
		t.errText = v.Error
	}
	if v.Done {
		t.done, t.doneReason = true, v.DoneReason
	}
}

func (o *observedBody) Close() error { return o.rc.Close() }

// snapshot returns a copy of what the call saw.
func (c *call) snapshot() seen {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

// errorMessage reads a provider's error body: OpenAI's
// {"error":{"message":...}}, Ollama's {"error":"..."}, Anthropic's
// {"type":"error","error":{"type":...,"message":...}}, or plain text.
func errorMessage(body []byte) (msg, code string) {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil && len(v.Error) > 0 {
		var s string
		if json.Unmarshal(v.Error, &s) == nil {
			return s, ""
		}
		var o struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		if json.Unmarshal(v.Error, &o) == nil && o.Message != "" {
			code := o.Type
			if s, ok := o.Code.(string); ok && s != "" {
				code = s
			}
			return o.Message, code
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 300 {
		text = text[:300] + "..."
	}
	return text, ""
}

// shownURL is u without its user information, for messages: a request's
// URL keeps the user:password@ of a base URL that had one.
func shownURL(u *url.URL) *url.URL {
	if u == nil || u.User == nil {
		return u
	}
	c := *u
	c.User = nil
	return &c
}
