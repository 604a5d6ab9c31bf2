package mcpserver

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

type bufWC struct{ bytes.Buffer }

func (*bufWC) Close() error { return nil }

// TestStdioLineBoundIsExact: a message of max bytes passes and one of
// max+1 is refused, whether its line ends in a newline or in the end of
// input (the bound used to count the newline, so a last line without
// one passed at max+1).
func TestStdioLineBoundIsExact(t *testing.T) {
	t.Parallel()
	const max = 64
	msg := func(n int) string { // a JSON-RPC notification of n bytes
		head := `{"jsonrpc":"2.0","method":"x","params":{"p":"`
		return head + strings.Repeat("a", n-len(head)-3) + `"}}`
	}
	for _, tc := range []struct {
		name    string
		n       int
		newline bool
		refused bool
	}{
		{"max, newline", max, true, false},
		{"max, at EOF", max, false, false},
		{"max+1, newline", max + 1, true, true},
		{"max+1, at EOF", max + 1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := msg(tc.n)
			assert.Len(t, in, tc.n)
			if tc.newline {
				in += "\n"
			}
			out := &bufWC{}
			f := newLineFilter(io.NopCloser(strings.NewReader(in)), &lockedWriter{w: out}, max, nil)
			got, err := io.ReadAll(f)
			assert.NoError(t, err)
			if tc.refused {
				assert.Empty(t, got, "a message over the bound is not passed on")
				assert.Contains(t, out.String(), "bound of 64 bytes")
			} else {
				assert.Equal(t, msg(tc.n)+"\n", string(got))
				assert.Empty(t, out.String(), "no error answered")
			}
		})
	}
}
