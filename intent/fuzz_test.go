package intent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// seedFiles returns the fixtures in testdata/responses, by name.
func seedFiles(f *testing.F) map[string]string {
	f.Helper()
	dir := filepath.Join("..", "testdata", "responses")
	entries, err := os.ReadDir(dir)
	require.NoError(f, err)
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(f, err)
		files[e.Name()] = string(b)
	}
	require.NotEmpty(f, files, "no seed files in %s", dir)
	return files
}

var extraSeeds = []string{
	"", "{}", "[]", "null", "42", `"s"`, `{"a":1,"a":2}`, `{"a":"\ud800"}`,
	"```json\n{\"tool\":\"x\",\"args\":\"{\\\"a\\\":[1,1.0,\\\"1\\\"]}\"}\n```",
	`{"tool_intent":{"name":"x","arguments":"null","rationale":"r"},"v":[null,0,false,""]}`,
	`{"n":[1e21,1e-7,0.000001,-0,123456789012345678901234567890]}`,
	"```\n{\"a\":1}\n```\n{\"a\":1.0}", "````json\n[1]\n````", `x {"a":{"b":[{"c":{}}]}} y`,
	strings.Repeat("[", 600) + strings.Repeat("]", 600), `{"tool_intent":null,"a":1}`,
}

// sentinels are the only errors Parse, FromToolCalls, Key and Canonical may
// return (wrapped).
var sentinels = []error{ErrNoAnswer, ErrMalformed, ErrAmbiguous, ErrInvalidIntent}

// maxFuzzInput bounds the fuzzers' inputs: every property below is about
// structure, not size (sizes are tested on their own), and a bounded input
// keeps every execution fast on a loaded machine, where a slow one can
// outlive -fuzztime and fail the run with "context deadline exceeded".
const maxFuzzInput = 4 << 10

func checkSentinel(t *testing.T, err error) {
	t.Helper()
	n := 0
	for _, s := range sentinels {
		if errors.Is(err, s) {
			n++
		}
	}
	require.Equal(t, 1, n, "error %q must wrap exactly one sentinel", err)
}

// checkRoundTrip asserts what must hold for every Output Parse returns.
func checkRoundTrip(t *testing.T, o Output) {
	t.Helper()
	require.False(t, o.Value == nil && o.Intent == nil, "Parse returned an Output with neither Value nor Intent")
	if o.Intent != nil {
		require.NotNil(t, o.Intent.Args, "Parse returned nil Args")
	}
	k, err := Key(o)
	require.NoError(t, err, "Key of a parsed Output")
	require.NotZero(t, k, "Key is never 0")
	c, err := Canonical(o)
	require.NoError(t, err, "Canonical of a parsed Output")
	require.Equal(t, k, KeyOf(c), "Key(o) == KeyOf(Canonical(o))")
	o2, err := Parse(string(c))
	require.NoError(t, err, "Parse(Canonical(o)) for %s", c)
	k2, err := Key(o2)
	require.NoError(t, err)
	require.Equal(t, k, k2, "Key(Parse(Canonical(o))) != Key(o) (canonical %s)", c)
	c2, err := Canonical(o2)
	require.NoError(t, err)
	require.Equal(t, string(c), string(c2), "Canonical is not a fixed point")
	require.Equal(t, o.Value, o2.Value, "same key, different Values")
	require.Equal(t, o.Intent == nil, o2.Intent == nil, "same key, intent and no intent")
	if o.Intent != nil {
		require.Equal(t, o.Intent.Tool, o2.Intent.Tool)
		require.Equal(t, o.Intent.Args, o2.Intent.Args, "same key, different Args")
	}
	if o.Value != nil {
		// A caller's json.Marshal(Value) and encoding/json decoding keep
		// the key; so does DecodeValue into an interface.
		b, err := json.Marshal(o.Value)
		require.NoError(t, err, "json.Marshal(Value)")
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		var v any
		require.NoError(t, dec.Decode(&v), "decoding json.Marshal(Value) = %s", b)
		k3, err := Key(Output{Value: v, Intent: o.Intent})
		require.NoError(t, err)
		require.Equal(t, k, k3, "Value through encoding/json")
		var d any
		require.NoError(t, o.DecodeValue(&d))
		require.Equal(t, o.Value, d, "DecodeValue into an interface")
	}
	if o.Intent != nil {
		// Rationale never counts, nor does a JSON null Value beside the
		// intent when there is no Value.
		in := *o.Intent
		in.Rationale += " (and another reason)"
		k3, err := Key(Output{Value: o.Value, Intent: &in})
		require.NoError(t, err)
		require.Equal(t, k, k3, "Rationale changed the key")
		if o.Value == nil {
			k4, err := Key(Output{Value: map[string]any(nil), Intent: o.Intent})
			require.NoError(t, err)
			require.Equal(t, k, k4, "a nil map Value changed the key")
		}
	}
}

// checkDecoder compares the strict decoder with encoding/json on text.
func checkDecoder(t *testing.T, text string) {
	t.Helper()
	mine, err := decodeJSON(text)
	valid := json.Valid([]byte(text))
	switch {
	case err == nil:
		require.True(t, valid, "decoder accepts %q, encoding/json does not", text)
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		var theirs any
		require.NoError(t, dec.Decode(&theirs), "encoding/json")
		a, err := toNode(mine, 0)
		require.NoError(t, err)
		b, err := toNode(theirs, 0)
		require.NoError(t, err)
		require.Equal(t, string(appendNode(nil, &b)), string(appendNode(nil, &a)), "decoder and encoding/json read %q apart", text)
	case valid:
		// Allowed only for the documented strictness.
		msg := err.Error()
		for _, why := range []string{"duplicate object key", "invalid UTF-8", "invalid surrogate pair", "nesting deeper", "exponent out of range"} {
			if strings.Contains(msg, why) {
				return
			}
		}
		require.Fail(t, "decoder rejects valid JSON", "%q: %v", text, err)
	}
}

// FuzzParse: Parse never panics or hangs, fails only with a sentinel, and
// every Output it returns survives Key(Parse(Canonical(o))) == Key(o). The
// strict JSON decoder is checked against encoding/json on the same input.
func FuzzParse(f *testing.F) {
	for _, s := range seedFiles(f) {
		f.Add(s)
	}
	for _, s := range extraSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > maxFuzzInput {
			return
		}
		o, err := Parse(text)
		if err != nil {
			checkSentinel(t, err)
			require.Equal(t, Output{}, o, "Parse returned an Output with an error")
		} else {
			checkRoundTrip(t, o)
		}
		checkDecoder(t, text)
	})
}

// FuzzKey: for any reply, the key survives the canonical round trip; for any
// native call (name, arguments), FromToolCalls and the same call written as
// JSON text agree: same key and Args, or the same sentinel error.
func FuzzKey(f *testing.F) {
	for name, s := range seedFiles(f) {
		tool, args := "read_file", `{"path":"notes/todo.txt"}`
		if strings.HasPrefix(name, "native") {
			var wire []struct {
				Function *llms.FunctionCall `json:"function"`
			}
			if json.Unmarshal([]byte(s), &wire) == nil && len(wire) > 0 && wire[0].Function != nil {
				tool, args = wire[0].Function.Name, wire[0].Function.Arguments
			}
		}
		f.Add(s, tool, args)
	}
	f.Add(`{"a":1}`, "x", "")
	f.Add(`{"a":1}`, "x", "null")
	f.Add(`{"a":1}`, "x", `[1]`)
	f.Add(`{"a":1}`, "", `{}`)
	f.Add(`{"a":1}`, "x", `{"n":1.0,"s":"1","l":[1,1],"z":null}`)
	f.Fuzz(func(t *testing.T, text, tool, args string) {
		if len(text)+len(tool)+len(args) > maxFuzzInput {
			return
		}
		if o, err := Parse(text); err == nil {
			checkRoundTrip(t, o)
		}

		native, nerr := FromToolCalls([]llms.ToolCall{{
			ID: "c", Type: "function", FunctionCall: &llms.FunctionCall{Name: tool, Arguments: args},
		}})
		if nerr != nil {
			checkSentinel(t, nerr)
		}
		if !utf8.ValidString(tool) || !utf8.ValidString(args) {
			return // json.Marshal below would replace the invalid bytes
		}
		b, err := json.Marshal(map[string]any{keyToolIntent: map[string]any{"name": tool, "arguments": args}})
		require.NoError(t, err)
		written, werr := Parse(string(b))
		switch {
		case nerr != nil && werr != nil:
			for _, s := range sentinels {
				require.Equal(t, errors.Is(nerr, s), errors.Is(werr, s), "native error %v, written error %v", nerr, werr)
			}
		default:
			require.NoError(t, nerr, "native fails, written does not (%s)", b)
			require.NoError(t, werr, "written fails, native does not (%s)", b)
			kn, err := Key(native)
			require.NoError(t, err)
			kw, err := Key(written)
			require.NoError(t, err)
			require.Equal(t, kn, kw, "native and written keys")
			require.Equal(t, native, written)
			checkRoundTrip(t, native)
		}
	})
}
