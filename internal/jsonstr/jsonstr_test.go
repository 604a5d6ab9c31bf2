package jsonstr

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendIsMarshal: every byte between two others, and strings of
// every escape class, encode as json.Marshal encodes them.
func TestAppendIsMarshal(t *testing.T) {
	for c := range 256 {
		s := string([]byte{'x', byte(c), 'y'})
		want, _ := json.Marshal(s)
		require.Equal(t, string(want), string(Append(nil, s)), "byte %#x", c)
	}
	for _, s := range []string{"", "plain", "<a&b>", "tab\tnew\nline", "\u2028\u2029", "\xff\xfe", "é ü 漢", `"quoted" \ back`} {
		want, _ := json.Marshal(s)
		require.Equal(t, string(want), string(Append([]byte("prefix"), s))[len("prefix"):], "%q", s)
	}
}

func TestAppendAllocatesNothingWithRoom(t *testing.T) {
	b := make([]byte, 0, 256)
	require.Zero(t, testing.AllocsPerRun(100, func() { b = Append(b[:0], "a string <with> \"escapes\"\n") }))
}

// FuzzAppend: for any string, Append writes json.Marshal's bytes.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "x", "<&>", "\u2028", "\xff", "\x00\x1f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(Append(nil, s)))
	})
}
