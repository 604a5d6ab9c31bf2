package mcpserver

import (
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// methodCancelled is the MCP notification that cancels a request.
const methodCancelled = "notifications/cancelled"

// cancels keeps the responses to cancelled requests off a stdio session.
//
// The MCP spec says a receiver of notifications/cancelled should not send
// a response for the cancelled request. The SDK (go-sdk v1.8.0) cancels
// the handler's context but still writes whatever the handler returns (or
// a context-canceled error for a request that had not started): its
// jsonrpc2 layer writes a response for every call. So the session's
// reader notes the calls in flight and the ones the client cancelled,
// and its writer drops a response to a cancelled call. A response that
// was written before the cancellation arrived has gone; that race is the
// spec's too. Safe for concurrent use; it holds one entry per call in
// flight.
type cancels struct {
	log      *slog.Logger
	mu       sync.Mutex
	inFlight map[jsonrpc.ID]bool // true: cancelled by the client
	idleCh   chan struct{}       // closed when inFlight empties; nil when nobody waits
}

// closed is a channel that is always closed.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// idle returns a channel closed once no call is in flight: at once when
// none is, or when c is nil (nothing is tracked).
func (c *cancels) idle() <-chan struct{} {
	if c == nil {
		return closed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.inFlight) == 0 {
		return closed
	}
	if c.idleCh == nil {
		c.idleCh = make(chan struct{})
	}
	return c.idleCh
}

func newCancels(log *slog.Logger) *cancels {
	return &cancels{log: log, inFlight: map[jsonrpc.ID]bool{}}
}

// received notes an incoming message: a call is in flight, a
// notifications/cancelled cancels the call it names if it is in flight.
func (c *cancels) received(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.IsCall() {
		if _, dup := c.inFlight[req.ID]; !dup { // a reused id is the SDK's to refuse
			c.inFlight[req.ID] = false
		}
		return
	}
	if req.Method != methodCancelled {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	if _, ok := c.inFlight[id]; ok {
		c.inFlight[id] = true
	}
}

// drop reports whether line, an outgoing message, is the response to a
// call the client cancelled; it forgets the call once it is answered.
func (c *cancels) drop(line []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.inFlight) == 0 {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	cancelled := c.inFlight[resp.ID]
	delete(c.inFlight, resp.ID)
	if len(c.inFlight) == 0 && c.idleCh != nil {
		close(c.idleCh)
		c.idleCh = nil
	}
	if cancelled {
		c.log.Debug("dropped the response to a cancelled request", "id", resp.ID.Raw())
	}
	return cancelled
}
