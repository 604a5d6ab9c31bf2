package observe

import (
	"bytes"
	"io"
	"slices"
	"sync"
)

// Secrets is a set of credentials a process holds, for RedactWriter. The
// zero value is an empty set, ready to use; it is safe for concurrent use.
type Secrets struct {
	mu   sync.RWMutex
	list [][]byte
}

// Add puts secrets in the set. A string shorter than 4 bytes is not
// added: it would redact ordinary text (see NewLogHandler).
func (s *Secrets) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s.list = append(s.list, []byte(sec))
		}
	}
	// Longest first: a secret that holds another is replaced whole.
	slices.SortStableFunc(s.list, func(a, b []byte) int { return len(b) - len(a) })
}

// RedactWriter returns a writer that writes to w what it is given with
// every occurrence of each secret in s, as it is at the time of the
// write, replaced by Redacted. Each Write is redacted on its own: a
// secret split across two writes is not found, so write whole lines (as
// fmt.Fprintln, slog's handlers and json.Encoder do). A Write returns
// len(p) when the redacted bytes were all written. Its Unwrap method
// returns w, for a caller that asks what is underneath (a terminal?).
// Cost: a scan of p per secret; a copy of p only when it holds one.
func RedactWriter(w io.Writer, s *Secrets) io.Writer {
	return &redactWriter{w: w, s: s}
}

type redactWriter struct {
	w io.Writer
	s *Secrets
}

// Unwrap returns the writer written to.
func (r *redactWriter) Unwrap() io.Writer { return r.w }

func (r *redactWriter) Write(p []byte) (int, error) {
	out := p
	r.s.mu.RLock()
	for _, sec := range r.s.list {
		if bytes.Contains(out, sec) {
			out = bytes.ReplaceAll(out, sec, []byte(Redacted))
		}
	}
	r.s.mu.RUnlock()
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
