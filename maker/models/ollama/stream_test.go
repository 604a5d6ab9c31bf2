package ollama

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// FuzzStreamLines: the reply-stream observer, read in chunks of any size,
// never panics, counts every non-blank line and every byte.
func FuzzStreamLines(f *testing.F) {
	for _, s := range []string{
		"{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true,\"done_reason\":\"stop\"}\n",
		"{\"error\":\"model not found\"}",
		"\n\n  \n{\"done\":tr",
		"\xff",
	} {
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8) {
		s := &stream{}
		var r io.Reader = s.Body(io.NopCloser(bytes.NewReader(body)))
		if chunk%2 == 1 {
			r = iotest.OneByteReader(r)
		}
		_, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, make([]byte, int(chunk)%61+1))
		require.NoError(t, err)
		lines := 0
		for _, l := range strings.Split(string(body), "\n") {
			if len(bytes.TrimSpace([]byte(l))) > 0 {
				lines++
			}
		}
		require.Equal(t, lines, s.lines)
		require.Equal(t, int64(len(body)), s.bytesRead)
	})
}
