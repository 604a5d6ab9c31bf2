package observe

import (
	"io"
	"sync"

	"github.com/mdap-go/mdap/internal/secrets"
)

// Secrets is a set of credentials a process holds, for RedactWriter. The
// zero value is an empty set, ready to use; it is safe for concurrent use.
type Secrets struct {
	mu  sync.RWMutex
	set secrets.Set // replaced, never changed, by Add
}

// Add puts secrets in the set. A string shorter than 4 bytes is not
// added: it would redact ordinary text (see NewLogHandler). Cost: three
// encodings of each secret and a sort of the set's forms.
func (s *Secrets) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set = s.set.With(secrets...)
}

func (s *Secrets) current() secrets.Set {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.set
}

// RedactString returns str with every form of each secret in s replaced
// by Redacted, as RedactWriter does. A caller that shortens a text for
// display redacts it first: a secret cut in two is no longer found, and
// its first characters would show. A nil s redacts nothing.
func (s *Secrets) RedactString(str string) string {
	if s == nil {
		return str
	}
	out, _ := s.current().RedactString(str)
	return out
}

// RedactWriter returns a writer that writes to w what it is given with
// every occurrence of each secret in s, as it is at the time of the
// write, replaced by Redacted: the secret as it is, and as encoding/json
// writes it inside a string, with and without HTML escaping (`"` as \",
// `\` as \\, control characters, <, >, &, U+2028 and U+2029 escaped), so
// that JSON output (a --json summary, a JSON log line) is redacted too.
// A secret holding another is replaced whole. Each Write is redacted on
// its own and passed on at once, unbuffered: a secret split across two
// writes is not found, so write whole lines (as fmt.Fprintln, slog's
// handlers and json.Encoder do). A Write returns len(p) when the redacted
// bytes were all written. Its Unwrap method returns w, for a caller that
// asks what is underneath (a terminal?). Cost: a scan of p per form of
// each secret, with no allocation when p holds none; a copy of p when it
// holds one.
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
	out, _ := r.s.current().Redact(p)
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
