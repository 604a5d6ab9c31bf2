package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// validCases are values at every edge of the grammar, valid or not.
var validCases = []string{
	``, ` `, `0`, `-0`, `-`, `01`, `-01`, `1.`, `1.5`, `1.5e`, `1e5`, `1E+5`, `1e-5`, `1e+`, `.5`, `+1`, `1.5.5`, `12e3.4`,
	`true`, `tru`, `truex`, `false`, `fals`, `null`, `nul`, `nulll`, `True`,
	`""`, `"`, `"a`, `"\"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u00e9"`, `"\u00E9"`, `"\u00g9"`, `"\u00e"`, `"\u12"`, `"\x"`, "\"\x01\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\xfe\"", "\"é\"",
	`{}`, `[]`, `{ }`, `[ ]`, ` {} `, "\t[\n]\r", `{`, `[`, `}`, `]`, `{]`, `[}`, `[[]]`, `[[]`, `[]]`, `[],[]`, `[] []`,
	`{"a":1}`, `{"a" : 1 }`, `{"a":}`, `{"a"}`, `{"a":1,}`, `{,"a":1}`, `{"a":1,"b":[1,2,{"c":null}]}`, `{1:1}`, `{"a":1 "b":2}`, `{"a"::1}`,
	`[1,2]`, `[1,]`, `[,1]`, `[1 2]`, `[1,,2]`, `["a",{"b":[true,false,null]},-1.5e10]`, `[{}]`, `[{},[]]`, `{"a":{}}`, `{"a":[]}`,
	`{"move":[1,0,2],"next_state":[[13,12,11,10,9,8,7,6,5,4,3,2],[1],[]]}`, `1 `, ` 1`, `1 1`, `"a" "b"`, "[1]\x00", "\x00",
	// White space at every place a token may follow, and bytes just
	// below and above it.
	`[1, 2]`, `[1 ,2]`, `[ 1]`, `{"a":1, "b":2}`, `{ "a":1}`, `{"a" :1}`, `{"a": 1}`, `{"a":1 }`, "[\n1\r,\t2\n]", "{\r\"a\"\t:\n1\r}",
	"[1,\x1f2]", "[1,!2]", "[\x1f1]", "{\x1f}", "[1\x1f]", "{\"a\"\x1f:1}", "{\"a\":\x1f1}", "[1,\x00]", "[1 , 2 ]",
	// Every hex digit class at its edges, and the bytes next to them.
	`"\u09af"`, `"\uAFaf"`, `"\u0aFA"`, `"\u/000"`, `"\u:000"`, "\"\\u`000\"", `"\ug000"`, `"\u@000"`, `"\uG000"`,
	// The digit 9 in every place a number has digits, and the bytes next to 0 and 9.
	`19`, `1.9`, `1e9`, `9`, `-9`, `0.09`, `1/`, `1:`, `1./`, `1.:`, `1e/`, `1e:`,
}

// TestValidIsJSONValid: every case, and every prefix of the longer ones,
// is judged as json.Valid judges it.
func TestValidIsJSONValid(t *testing.T) {
	for _, c := range validCases {
		for n := range len(c) + 1 {
			b := make([]byte, n) // no room past its end: a read there panics
			copy(b, c)
			require.Equal(t, json.Valid(b), Valid(b), "%q", b)
		}
	}
}

// TestValidDepth: nesting up to encoding/json's bound is JSON, one level
// more is not, for arrays and objects, empty or not at the deepest level.
func TestValidDepth(t *testing.T) {
	for _, depth := range []int{63, 64, 65, maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, c := range []struct{ open, inner, close string }{{"[", "", "]"}, {"[", "1", "]"}, {`{"a":`, "{}", "}"}, {`{"a":`, "1", "}"}} {
			levels := depth
			if c.inner == "{}" {
				levels-- // the empty object is a level too
			}
			b := []byte(strings.Repeat(c.open, levels) + c.inner + strings.Repeat(c.close, levels))
			require.Equal(t, json.Valid(b), Valid(b), "depth %d of %q%q", depth, c.open, c.inner)
		}
	}
	require.True(t, Valid([]byte(strings.Repeat("[", maxDepth)+strings.Repeat("]", maxDepth))))
	require.False(t, Valid([]byte(strings.Repeat("[", maxDepth+1)+strings.Repeat("]", maxDepth+1))))
}

func TestValidAllocatesNothing(t *testing.T) {
	b := []byte(`{"move":[1,0,2],"next_state":[[[[[[13,12,11,10,9,8,7,6,5,4,3,2]]]]],[1],[]],"s":"a\u00e9\n"}`)
	require.True(t, Valid(b))
	require.Zero(t, testing.AllocsPerRun(100, func() { Valid(b) }))
	deep := []byte(strings.Repeat("[", 64) + strings.Repeat("]", 64))
	deeper := []byte(strings.Repeat("[", 65) + "1" + strings.Repeat("]", 65))
	require.True(t, Valid(deep))
	require.Zero(t, testing.AllocsPerRun(100, func() { Valid(deep) }), "64 deep")
	require.True(t, Valid(deeper))
	require.Positive(t, testing.AllocsPerRun(100, func() { Valid(deeper) }), "65 deep: the stack grows")
}

// FuzzValid: for any bytes, Valid reports what json.Valid reports.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	line := []byte(`{"move":[1,0,2],"next_state":[[13,12,11,10,9,8,7,6,5,4,3,2],[1],[]]}`)
	b.Run("jsonstr", func(b *testing.B) {
		for b.Loop() {
			Valid(line)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			json.Valid(line)
		}
	})
}
