package ollama

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/tmc/langchaingo/llms"
)

// langchaingo's Ollama client ignores the final "done" line of a reply
// stream (its done_reason and token counts) and takes a stream cut short
// for an empty reply; it can send an answer schema only as a string,
// which Ollama refuses. So each /api/chat call carries the schema in its
// request's "format", and its reply stream is read as it passes.

// newStream is the provider's models.Provider.Stream: a /api/chat
// request's stream, with the call's answer schema in its "format".
func newStream(c *models.Conn, req *http.Request) (*http.Request, models.Stream, error) {
	if !strings.HasSuffix(req.URL.Path, "/api/chat") {
		return req, nil, nil
	}
	if schema, ok := maker.AnswerSchemaFrom(req.Context()); ok && req.Body != nil {
		r, err := withFormat(req, schema)
		if err != nil {
			return nil, nil, err
		}
		req = r
	}
	return req, &stream{c: c}, nil
}

// stream is what a reply stream said: its final line carries done,
// done_reason and the counts. The mutex covers a body read or closed
// from elsewhere than the goroutine that checks it.
type stream struct {
	c          *models.Conn
	mu         sync.Mutex
	line       []byte
	lines      int
	done       bool
	doneReason string
	errText    string
	bytesRead  int64
	readErr    error // the error that ended the body, other than io.EOF
}

// Body reads Ollama's NDJSON reply stream through, line by line.
func (s *stream) Body(rc io.ReadCloser) io.ReadCloser { return &observedBody{rc: rc, s: s} }

// Check implements models.Stream: a stream without its final line is
// models.ErrIncomplete (transient), a server's error line an error that
// quotes it; else the reply gets the stream's stop reason.
func (s *stream) Check(resp *llms.ContentResponse, err error, took time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.errText == "" && !s.done {
		// langchaingo's Ollama client returns an empty reply, or the
		// JSON error of a cut line.
		return s.incomplete(took)
	}
	if err != nil {
		return nil
	}
	if s.errText != "" {
		return fmt.Errorf("%s at %s: the server reported: %s", s.c.Spec, s.c.URL, s.errText)
	}
	if resp != nil && len(resp.Choices) > 0 && resp.Choices[0] != nil && resp.Choices[0].StopReason == "" {
		resp.Choices[0].StopReason = s.doneReason
	}
	return nil
}

// incomplete is the error of a reply stream without its final line.
func (s *stream) incomplete(took time.Duration) error {
	why := "the server closed it"
	switch {
	case took >= s.c.Timeout || (s.readErr != nil && models.IsTimeout(s.readErr)):
		why = fmt.Sprintf("the call reached --timeout %s", s.c.Timeout)
	case s.readErr != nil:
		why = s.readErr.Error()
	}
	return models.Transient(models.ErrIncomplete, s.readErr, "%s at %s: the reply stream ended after %d bytes without its final \"done\" line (%s)", s.c.Spec, s.c.URL, s.bytesRead, why)
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

// observedBody reads the reply stream through into its stream.
type observedBody struct {
	rc io.ReadCloser
	s  *stream
}

func (o *observedBody) Read(p []byte) (int, error) {
	n, err := o.rc.Read(p)
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bytesRead += int64(n)
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			s.line = append(s.line, chunk...)
			break
		}
		s.line = append(s.line, chunk[:i]...)
		s.endLine()
		chunk = chunk[i+1:]
	}
	if err == io.EOF {
		s.endLine() // a last line without its newline
	} else if err != nil && s.readErr == nil {
		s.readErr = err
	}
	return n, err
}

func (o *observedBody) Close() error { return o.rc.Close() }

func (s *stream) endLine() {
	line := bytes.TrimSpace(s.line)
	s.line = s.line[:0]
	if len(line) == 0 {
		return
	}
	s.lines++
	var v struct {
		Done       bool   `json:"done"`
		DoneReason string `json:"done_reason"`
		Error      string `json:"error"`
	}
	if json.Unmarshal(line, &v) != nil {
		return
	}
	if v.Error != "" {
		s.errText = v.Error
	}
	if v.Done {
		s.done, s.doneReason = true, v.DoneReason
	}
}
