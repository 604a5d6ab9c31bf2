package mcpserver

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SSERetry is the reconnection delay every event stream of the HTTP
// endpoint announces in its first bytes (an SSE retry field), before any
// event. A stream can end before its call does (the write timeout of
// Bounds, a proxy, a restart): the MCP spec asks a server that may close a
// stream early to tell the client when to reconnect (with Last-Event-ID),
// and the field holds for the whole stream, so it is sent first, when it
// can still be.
const SSERetry = 2 * time.Second

// retryWriter writes the retry field ahead of an event stream's body.
type retryWriter struct {
	http.ResponseWriter
	started bool
}

func (w *retryWriter) WriteHeader(code int) {
	if w.started {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		_, _ = w.ResponseWriter.Write([]byte("retry: " + strconv.FormatInt(SSERetry.Milliseconds(), 10) + "\n\n"))
	}
}

func (w *retryWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's Flush.
func (w *retryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
