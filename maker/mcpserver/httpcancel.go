package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// httpCancels keeps the responses to cancelled calls off the streamable
// HTTP endpoint, as cancels does over stdio: a POST carrying a call
// registers it (session, id) while its request is served; a POST carrying
// notifications/cancelled for it marks it before the SDK sees the
// notification; the call's response stream then drops the response (one
// SSE event, or a JSON body, per write of the SDK). It holds one entry
// per call in flight.
type httpCancels struct {
	log      *slog.Logger
	onCall   func(session string) // told of every call on a session, if set
	mu       sync.Mutex
	inFlight map[httpCall]bool // true: cancelled by the client
}

type httpCall struct {
	session string
	id      jsonrpc.ID
}

// serve serves r through h, tracking its call or applying its
// cancellation. max bounds the body read here (the SDK answers a larger
// one with 413).
func (c *httpCancels) serve(h http.Handler, w http.ResponseWriter, r *http.Request, max int64) {
	session := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodPost || session == "" || r.Body == nil {
		h.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || int64(len(body)) > max {
		h.ServeHTTP(w, r)
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		h.ServeHTTP(w, r)
		return
	}
	if !req.IsCall() {
		if req.Method == methodCancelled {
			c.cancel(session, req.Params)
		}
		h.ServeHTTP(w, r)
		return
	}
	if c.onCall != nil {
		c.onCall(session)
	}
	call := httpCall{session, req.ID}
	c.mu.Lock()
	if _, dup := c.inFlight[call]; dup { // a reused id is the SDK's to refuse
		c.mu.Unlock()
		h.ServeHTTP(w, r)
		return
	}
	c.inFlight[call] = false
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.inFlight, call)
		c.mu.Unlock()
	}()
	h.ServeHTTP(&cancelWriter{ResponseWriter: w, c: c, call: call}, r)
}

func (c *httpCancels) cancel(session string, params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	call := httpCall{session, id}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.inFlight[call]; ok {
		c.inFlight[call] = true
	}
}

func (c *httpCancels) cancelled(call httpCall) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inFlight[call]
}

// cancelWriter is the response stream of one call: it drops the call's
// response once the client cancelled the call.
type cancelWriter struct {
	http.ResponseWriter
	c    *httpCancels
	call httpCall
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	if w.c.cancelled(w.call) && isResponseTo(p, w.call.id) {
		w.c.log.Debug("dropped the response to a cancelled request", "id", w.call.id.Raw(), "session", w.call.session)
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController flush the stream.
func (w *cancelWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isResponseTo reports whether p, one SSE event or a JSON body, is the
// response to the call id.
func isResponseTo(p []byte, id jsonrpc.ID) bool {
	data := p
	if i := bytes.Index(p, []byte("data: ")); i >= 0 && !bytes.HasPrefix(bytes.TrimSpace(p), []byte("{")) {
		data = p[i+len("data: "):]
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			data = data[:j]
		}
	}
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(data))
	if err != nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	return ok && resp.ID == id
}
