package intent

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeErrorNamesTheByte: an error names the character after the
// value, and a byte that is not UTF-8 by its value (decode.go:65).
func TestDecodeErrorNamesTheByte(t *testing.T) {
	for in, want := range map[string]string{
		"{}x":    `unexpected character 'x' after the JSON value`,
		"{}é":    `unexpected character 'é' after the JSON value`,
		"{}\xff": `unexpected byte 0xff after the JSON value`,
	} {
		_, err := decodeJSON(in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), want, "%q", in)
	}
}

// TestDecodeCutLiteralInsideAValue: a literal cut short by the end of the
// input, after other bytes, is an error, not a read past the end
// (decode.go:104).
func TestDecodeCutLiteralInsideAValue(t *testing.T) {
	for _, in := range []string{`[tru`, `{"a":nul`, `[1,fals`, `  t`} {
		var err error
		assert.NotPanics(t, func() { _, err = decodeJSON(in) }, "%q", in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), "invalid literal", "%q", in)
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

// TestDecodeCutAfterAKey: input that ends right after an object key (or
// its white space) is an error naming the end, not a read past it
// (decode.go:144).
func TestDecodeCutAfterAKey(t *testing.T) {
	for _, in := range []string{`{"a"`, `{"a" `, `[{"a"`} {
		var err error
		assert.NotPanics(t, func() { _, err = decodeJSON(in) }, "%q", in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), "unexpected end of input, want ':'", "%q", in)
	}
}

// TestDecodeStringCutAfterAnEscape: a string cut right after a whole
// \u escape is unterminated; the escape itself is valid (decode.go:303,
// hex4's bound).
func TestDecodeStringCutAfterAnEscape(t *testing.T) {
	for _, in := range []string{`"\u0041`, `["\u00e9`} {
		_, err := decodeJSON(in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), "unterminated string", "%q", in)
	}
	v, err := decodeJSON(`"\u0041"`)
	require.NoError(t, err)
	assert.Equal(t, "A", v)
}

// TestDecodeStringsCutInsideAnEscape: input that ends inside or right
// after a backslash escape, or between the halves of a surrogate pair, is
// an error, never a read past the end (decode.go:257, :283); a pair at the
// very start of a string decodes (decode.go:283, the second half's
// offset). A \u escape cut inside its four digits is invalid (decode.go:303,
// hex4's at+4).
func TestDecodeStringsCutInsideAnEscape(t *testing.T) {
	for in, want := range map[string]string{
		`"\`:             "unterminated string",
		`["\`:            "unterminated string",
		`"ab\`:           "unterminated string",
		`"\u00`:          `invalid \u escape`,
		`["\u`:           `invalid \u escape`,
		`"\ud83d`:        "lone UTF-16 surrogate",
		`"\ud83d\`:       "lone UTF-16 surrogate",
		`"\ud83d\u`:      "lone UTF-16 surrogate",
		`["x","\ud83d\"`: "lone UTF-16 surrogate",
	} {
		var err error
		assert.NotPanics(t, func() { _, err = decodeJSON(in) }, "%q", in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), want, "%q", in)
	}
	for in, want := range map[string]string{
		`"\ud83d\ude00"`:   "😀",
		`"ab\ud83d\ude00"`: "ab😀",
	} {
		v, err := decodeJSON(in)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, v, "%q", in)
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
