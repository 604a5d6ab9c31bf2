package observe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedactWriterRemovesEverySecret(t *testing.T) {
	var s observe.Secrets
	var buf bytes.Buffer
	w := observe.RedactWriter(&buf, &s)
	s.Add("sk-first-0123", "abc", "wxyz") // "abc" is too short to redact, 4 bytes are not
	line := "HTTP 401: Incorrect API key provided: Bearer sk-first-0123 (sk-first-0123), abc wxyz\n"
	n, err := fmt.Fprint(w, line)
	require.NoError(t, err)
	assert.Equal(t, len(line), n, "the caller's byte count, not the redacted one")
	s.Add("team-key-4567") // added later: later writes redact it
	fmt.Fprintln(w, "key team-key-4567 and sk-first-0123")
	assert.Equal(t, "HTTP 401: Incorrect API key provided: Bearer [REDACTED] ([REDACTED]), abc [REDACTED]\nkey [REDACTED] and [REDACTED]\n", buf.String())
}

func TestRedactWriterReplacesASecretHoldingAnotherWhole(t *testing.T) {
	var s observe.Secrets
	s.Add("abcd1234", "abcd1234WXYZ")
	var buf bytes.Buffer
	fmt.Fprintln(observe.RedactWriter(&buf, &s), "long abcd1234WXYZ short abcd1234")
	assert.Equal(t, "long [REDACTED] short [REDACTED]\n", buf.String())
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRedactWriterReportsTheWriteError(t *testing.T) {
	n, err := observe.RedactWriter(failing{}, &observe.Secrets{}).Write([]byte("x"))
	assert.Equal(t, 0, n)
	assert.EqualError(t, err, "disk full")
}

func TestSecretsAreSafeForConcurrentUse(t *testing.T) {
	var s observe.Secrets
	var mu sync.Mutex
	var buf bytes.Buffer
	w := observe.RedactWriter(lockedWriter{&mu, &buf}, &s)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { s.Add(fmt.Sprintf("secret-%d", i)) })
		wg.Go(func() { fmt.Fprintln(w, "line") })
	}
	wg.Wait()
	fmt.Fprintln(w, "secret-7")
	assert.Contains(t, buf.String(), "[REDACTED]\n")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Each Write is redacted on its own and passed on at once: the first half
// of a secret is written before the second comes, so a split secret is
// not found (the documented limit: write whole lines).
func TestRedactWriterRedactsEachWriteOnItsOwn(t *testing.T) {
	var s observe.Secrets
	s.Add("sk-first-0123")
	var buf bytes.Buffer
	w := observe.RedactWriter(&buf, &s)
	fmt.Fprint(w, "key sk-fir")
	assert.Equal(t, "key sk-fir", buf.String(), "written at once, not held back")
	fmt.Fprint(w, "st-0123\n")
	assert.Equal(t, "key sk-first-0123\n", buf.String(), "the split secret is not found")
	fmt.Fprintln(w, "key sk-first-0123")
	assert.Equal(t, "key sk-first-0123\nkey [REDACTED]\n", buf.String(), "a whole one is")
}

// A secret JSON escapes is found as json.Marshal writes it and as an
// encoder without HTML escaping (slog's JSON handler among them) does.
func TestRedactWriterFindsTheJSONEscapedForms(t *testing.T) {
	const key = `sk-a"b<c\d&e>-0123`
	var s observe.Secrets
	s.Add(key)
	var buf bytes.Buffer
	w := observe.RedactWriter(&buf, &s)
	require.NoError(t, json.NewEncoder(w).Encode(map[string]string{"error": "refused " + key}))
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(map[string]string{"error": "refused " + key}))
	slog.New(slog.NewJSONHandler(w, nil)).Error("refused " + key)
	fmt.Fprintln(w, "refused "+key)
	assert.NotContains(t, buf.String(), "-0123", "no form of the key: %s", buf.String())
	assert.Equal(t, 4, strings.Count(buf.String(), "refused [REDACTED]"), buf.String())
}

// NewLogHandler redacts each value and the message before the handler
// encodes them, so a form RedactWriter does not hold (slog's JSON handler
// writes a backspace as \u0008, encoding/json as \b) never reaches w.
func TestLogHandlerRedactsBeforeEncoding(t *testing.T) {
	const key = "sk-a\"b<c\b-0123"
	for _, format := range []string{observe.LogJSON, observe.LogText} {
		var buf bytes.Buffer
		h, err := observe.NewLogHandler(&buf, format, nil, key)
		require.NoError(t, err)
		slog.New(h).Error("refused "+key, "err", errors.New("HTTP 401: "+key), "body", "key "+key)
		assert.NotContains(t, buf.String(), "-0123", "%s: %s", format, buf.String())
		assert.Equal(t, 3, strings.Count(buf.String(), "[REDACTED]"), "%s: %s", format, buf.String())
	}
}

// A line that holds no secret is passed on as it is, with no allocation.
func TestRedactWriterWithoutASecretAllocatesNothing(t *testing.T) {
	var s observe.Secrets
	s.Add("sk-"+strings.Repeat("x", 100), `sk-a"b<c-0123`)
	var got []byte
	w := observe.RedactWriter(writerFunc(func(p []byte) (int, error) { got = p; return len(p), nil }), &s)
	line := []byte("an ordinary log line, sk-a and sk-x, no key\n")
	_, _ = w.Write(line)
	assert.Same(t, &line[0], &got[0], "the caller's bytes")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = w.Write(line) }))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
