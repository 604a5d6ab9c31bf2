package intent

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeRefusesCutOrTrailingInput: input cut anywhere (inside a
// literal, after a key, inside or after an escape, between the halves of
// a surrogate pair) or followed by more than white space is an error
// naming the byte, never a read past the end; a pair at a string's start
// and a whole \u escape decode.
func TestDecodeRefusesCutOrTrailingInput(t *testing.T) {
	for in, want := range map[string]string{
		"{}x":            "unexpected data after the JSON value at byte 2",
		"{}\xff":         "unexpected data after the JSON value at byte 2",
		"{} é":           "unexpected data after the JSON value at byte 3",
		`[tru`:           "unexpected end of input at byte 4",
		`{"a":nul`:       "unexpected end of input at byte 8",
		`  t`:            "unexpected end of input at byte 3",
		`{"a" `:          "unexpected end of input at byte 5",
		`[{"a"`:          "unexpected end of input at byte 5",
		`"\u0041`:        "unexpected end of input at byte 7",
		`"ab\`:           "unexpected end of input at byte 4",
		`["\u`:           "unexpected end of input at byte 4",
		`"\ud83d\`:       "unexpected end of input at byte 8",
		`["x","\ud83d\"`: "invalid surrogate pair",
	} {
		var err error
		assert.NotPanics(t, func() { _, err = decodeJSON(in) }, "%q", in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), want, "%q", in)
	}
	for in, want := range map[string]string{`"\u0041"`: "A", `"\ud83d\ude00"`: "😀", `"ab\ud83d\ude00"`: "ab😀"} {
		v, err := decodeJSON(in)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, v, "%q", in)
	}
}

// TestDecodeManyEmptyContainersAtOneLevel: an empty object or array
// leaves the nesting depth as it found it, so any number of them side by
// side decodes (decode.go:128, the empty object's depth--).
func TestDecodeManyEmptyContainersAtOneLevel(t *testing.T) {
	for _, empty := range []string{`{}`, `[]`, `{"a":{}}`, `[[]]`} {
		in := "[" + strings.Repeat(empty+",", 2*MaxDepth) + empty + "]"
		v, err := decodeJSON(in)
		require.NoError(t, err, "%s ×%d", empty, 2*MaxDepth+1)
		assert.Len(t, v, 2*MaxDepth+1)
	}
}

// TestHandBuiltValueDepthAsParsed: a hand-built Value nests as deep as a
// parsed one may, MaxDepth arrays or objects, and one level more is
// ErrMalformed, as Parse refuses it (form.go:188, :193, :208, :225).
func TestHandBuiltValueDepthAsParsed(t *testing.T) {
	arrays := func(n int) any {
		var v any = "x"
		for range n {
			v = []any{v}
		}
		return v
	}
	objects := func(n int) any {
		var v any = "x"
		for range n {
			v = map[string]any{"a": v}
		}
		return v
	}
	for name, nest := range map[string]func(int) any{"arrays": arrays, "objects": objects} {
		_, err := Canonical(Output{Value: nest(MaxDepth)})
		require.NoError(t, err, "%s %d deep", name, MaxDepth)
		_, err = Canonical(Output{Value: nest(MaxDepth + 1)})
		require.ErrorIs(t, err, ErrMalformed, "%s %d deep", name, MaxDepth+1)
		assert.Contains(t, err.Error(), "nesting deeper than 512", name)
	}
}

// TestHandBuiltFloatsKeepEveryDigit: a hand-built float64 or float32 Value
// is canonical with the shortest text that reads back as the same number,
// every significant digit kept (form.go:253, FormatFloat's precision -1).
func TestHandBuiltFloatsKeepEveryDigit(t *testing.T) {
	for v, want := range map[any]string{
		3.14159:          "3.14159",
		float32(0.1):     "0.1",
		float32(2.71828): "2.71828",
		1e-7:             "1e-7",
		123456.75:        "123456.75",
	} {
		c, err := Canonical(Output{Value: v})
		require.NoError(t, err, "%v", v)
		assert.Contains(t, string(c), want, "%v (%T)", v, v)
	}
}

// TestAmbiguousErrorGivesOffsetsInTheReply: the two disagreeing answers
// are named by their byte offsets in the reply as given, leading white
// space included (parse.go:110, lead+off for each of them).
func TestAmbiguousErrorGivesOffsetsInTheReply(t *testing.T) {
	_, err := Parse("   xx " + `{"a":1} or {"a":2}`)
	require.ErrorIs(t, err, ErrAmbiguous)
	assert.Contains(t, err.Error(), `at byte 6 says {"a":1} but`)
	assert.Contains(t, err.Error(), `at byte 17 says {"a":2}`)
}

// TestAbbreviateKeepsAFormOfTheLimit: a canonical form of at most 120
// bytes is shown whole; a longer one is shortened (parse.go:129).
func TestAbbreviateKeepsAFormOfTheLimit(t *testing.T) {
	exact := strings.Repeat("x", 120)
	assert.Equal(t, exact, abbreviate([]byte(exact)))
	long := strings.Repeat("y", 121)
	assert.NotEqual(t, long, abbreviate([]byte(long)))
	assert.Less(t, len(abbreviate([]byte(strings.Repeat("z", 1000)))), 200)
}

// TestCanonicalKeepsPrintableBytes: the canonical text escapes only '"',
// '\' and control characters; a space, the first printable byte, is
// written as itself (write.go:89, c >= 0x20).
func TestCanonicalKeepsPrintableBytes(t *testing.T) {
	got, err := Canonical(Output{Value: " a b~"})
	require.NoError(t, err)
	assert.Equal(t, `" a b~"`, string(got))
	got, err = Canonical(Output{Value: "\x1f\""})
	require.NoError(t, err)
	assert.Equal(t, `"\u001f\""`, string(got))
}
