package models

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// The transport sits under langchaingo's clients, which stay the only
// code that speaks a provider's protocol. It observes each call (the URL,
// the status, the headers, an error body, the transport's own error: what
// langchaingo's errors drop), and lets a provider read a streamed reply
// as it passes (Provider.Stream: what its client drops of it).

// Stream reads one call's streamed reply as the client reads it, for its
// Provider (Provider.Stream).
type Stream interface {
	// Body wraps the reply's body.
	Body(io.ReadCloser) io.ReadCloser
	// Check is called after the call, when the last response's status
	// was not an error, with what the client made of the reply: it
	// returns an error when the stream says the reply is not whole or
	// the server reported one (the model returns it as is), else nil,
	// after setting in resp what the client dropped of the stream. err,
	// when not nil and Check returns nil, is classified as any call's.
	Check(resp *llms.ContentResponse, err error, took time.Duration) error
}

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
	url     string      // the last request's URL, without its user information
	method  string      // and its method
	sendErr error       // the transport's error: no response at all
	status  int         // the response's status
	header  http.Header // and headers
	errBody []byte      // the first errBodyLimit bytes of an error body
	stream  Stream      // the reply's Stream, when its provider streams it
	head    []byte      // the first headLimit bytes of a successful body, not streamed
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

type callKey struct{}

// withCall returns a new call and a context under ctx that carries it.
func withCall(ctx context.Context) (context.Context, *call) {
	c := &call{}
	return context.WithValue(ctx, callKey{}, c), c
}

// transport observes the calls whose context carries a *call.
type transport struct {
	base   http.RoundTripper
	conn   *Conn
	stream func(*Conn, *http.Request) (*http.Request, Stream, error) // Provider.Stream; nil: none
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*call)
	if c == nil {
		return t.base.RoundTrip(req)
	}
	var stream Stream
	if t.stream != nil {
		r, s, err := t.stream(t.conn, req)
		if err != nil {
			return nil, err
		}
		req, stream = r, s
	}
	c.mu.Lock()
	c.url, c.method = ShownURL(req.URL.String()), req.Method
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
	case stream != nil:
		c.stream = stream
		resp.Body = stream.Body(resp.Body)
	case resp.StatusCode < 300:
		resp.Body = &headBody{rc: resp.Body, c: c}
	}
	return resp, nil
}

// errReader returns err, or io.EOF when err is nil.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, cmp.Or(e.err, io.EOF) }

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
