package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC error codes of a line that is not a message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// lineFilter passes the stdio transport only the lines that are JSON-RPC
// messages: a line that is not JSON is answered with a -32700 parse
// error, one that is JSON but not a message with -32600, and the session
// goes on (the SDK's transport would end it). A line over max bytes is
// read to its end without being kept (the filter holds at most max+1 of
// its bytes), answered with a -32600 error naming the bound, and the
// session goes on. At the end of input it holds the end back until every
// call it passed has been answered (or done is closed): the SDK's
// transport closes the session at the end of its input and drops the
// answers still being made, so a client that writes its requests and
// closes its end would lose them. It reads synchronously, in the
// transport's Read.
type lineFilter struct {
	r       io.ReadCloser
	br      *bufio.Reader
	w       *lockedWriter
	cancels *cancels
	done    <-chan struct{}
	max     int
	pending []byte
	err     error
}

func newLineFilter(r io.ReadCloser, w *lockedWriter, max int, done <-chan struct{}) *lineFilter {
	return &lineFilter{r: r, br: bufio.NewReaderSize(r, 64<<10), w: w, max: max, cancels: w.cancels, done: done}
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			if errors.Is(f.err, io.EOF) {
				select {
				case <-f.cancels.idle():
				case <-f.done:
				}
			}
			return 0, f.err
		}
		line, tooLong, err := f.line()
		if err != nil {
			f.err = err
		}
		if tooLong {
			f.refuseTooLong()
			continue
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			msg, derr := jsonrpc.DecodeMessage(t)
			if derr != nil {
				f.refuse(t, derr)
				continue
			}
			if f.cancels != nil {
				f.cancels.received(msg)
			}
			f.pending = append(line, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// line reads the next line without its newline. A line over max bytes
// is read to its end and dropped as it goes: tooLong, and no line.
func (f *lineFilter) line() (line []byte, tooLong bool, err error) {
	var b []byte
	for {
		chunk, err := f.br.ReadSlice('\n')
		if !tooLong {
			b = append(b, chunk...)
			if f.max > 0 && len(bytes.TrimSuffix(b, []byte{'\n'})) > f.max {
				tooLong, b = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return bytes.TrimSuffix(b, []byte{'\n'}), false, err
	}
}

// refuseTooLong answers a line over the bound. Its id is unknown (the
// line was not kept), so the response's is null.
func (f *lineFilter) refuseTooLong() {
	msg := fmt.Sprintf("Invalid Request: a message longer than this server's bound of %d bytes (--max-request-bytes) was discarded; send a smaller one", f.max)
	resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": codeInvalidRequest, "message": msg}})
	_, _ = f.w.Write(append(resp, '\n'))
}

// refuse answers a line that is not a message, with its id when it has
// one.
func (f *lineFilter) refuse(line []byte, derr error) {
	code, msg := codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message: "+derr.Error()
	if !json.Valid(line) {
		code, msg = codeParseError, "Parse error: the line is not JSON"
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	id := json.RawMessage("null")
	if json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 && (probe.ID[0] == '"' || (probe.ID[0] >= '0' && probe.ID[0] <= '9') || probe.ID[0] == '-') {
		id = probe.ID
	}
	resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	_, _ = f.w.Write(append(resp, '\n'))
}

func (f *lineFilter) Close() error { return f.r.Close() }

// lockedWriter serialises the transport's writes and the filter's. With
// cancels set it drops the responses to cancelled calls (the transport
// writes one message per Write).
type lockedWriter struct {
	mu      sync.Mutex
	w       io.WriteCloser
	cancels *cancels
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.cancels != nil && l.cancels.drop(p) {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }
