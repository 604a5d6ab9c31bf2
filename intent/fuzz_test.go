package intent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
)

// seedFiles returns the fixtures in testdata/responses, by name.
func seedFiles(f *testing.F) map[string]string {
	f.Helper()
	dir := filepath.Join("..", "testdata", "responses")
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	if len(files) == 0 {
		f.Fatal("no seed files in", dir)
	}
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

func checkSentinel(t *testing.T, err error) {
	t.Helper()
	n := 0
	for _, s := range sentinels {
		if errors.Is(err, s) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("error %q wraps %d sentinels, want exactly 1", err, n)
	}
}

// checkRoundTrip asserts what must hold for every Output Parse returns.
func checkRoundTrip(t *testing.T, o Output) {
	t.Helper()
	if o.Value == nil && o.Intent == nil {
		t.Fatal("Parse returned an Output with neither Value nor Intent")
	}
	if o.Intent != nil && o.Intent.Args == nil {
		t.Fatal("Parse returned nil Args")
	}
	k, err := Key(o)
	if err != nil {
		t.Fatalf("Key of a parsed Output: %v", err)
	}
	if k2, _ := Key(o); k2 != k {
		t.Fatal("Key is not deterministic")
	}
	c, err := Canonical(o)
	if err != nil {
		t.Fatalf("Canonical of a parsed Output: %v", err)
	}
	o2, err := Parse(string(c))
	if err != nil {
		t.Fatalf("Parse(Canonical(o)) = %v for %s", err, c)
	}
	k2, err := Key(o2)
	if err != nil || k2 != k {
		t.Fatalf("Key(Parse(Canonical(o))) = %x, %v; want %x (canonical %s)", k2, err, k, c)
	}
	if c2, _ := Canonical(o2); string(c2) != string(c) {
		t.Fatalf("Canonical is not a fixed point: %s then %s", c, c2)
	}
	if !reflect.DeepEqual(o.Value, o2.Value) {
		t.Fatalf("same key, different Values: %#v and %#v", o.Value, o2.Value)
	}
	if (o.Intent == nil) != (o2.Intent == nil) ||
		o.Intent != nil && (o.Intent.Tool != o2.Intent.Tool || !reflect.DeepEqual(o.Intent.Args, o2.Intent.Args)) {
		t.Fatalf("same key, different Intents: %#v and %#v", o.Intent, o2.Intent)
	}
	// A caller's json.Marshal(Value) and encoding/json decoding keep the key.
	if o.Value != nil {
		b, err := json.Marshal(o.Value)
		if err != nil {
			t.Fatalf("json.Marshal(Value): %v", err)
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decoding json.Marshal(Value) = %s: %v", b, err)
		}
		if k3, err := Key(Output{Value: v, Intent: o.Intent}); err != nil || k3 != k {
			t.Fatalf("Value through encoding/json: key %x, %v; want %x", k3, err, k)
		}
	}
	// Rationale never counts.
	if o.Intent != nil {
		in := *o.Intent
		in.Rationale += " (and another reason)"
		if k3, _ := Key(Output{Value: o.Value, Intent: &in}); k3 != k {
			t.Fatal("Rationale changed the key")
		}
	}
}

// checkDecoder compares the strict decoder with encoding/json on text.
func checkDecoder(t *testing.T, text string) {
	t.Helper()
	mine, err := decodeJSON(text)
	valid := json.Valid([]byte(text))
	switch {
	case err == nil && !valid:
		t.Fatalf("decoder accepts %q, encoding/json does not", text)
	case err != nil && valid:
		// Allowed only for the documented strictness.
		msg := err.Error()
		for _, why := range []string{"duplicate object key", "invalid UTF-8", "lone UTF-16 surrogate", "nesting deeper", "exponent out of range"} {
			if strings.Contains(msg, why) {
				return
			}
		}
		t.Fatalf("decoder rejects valid JSON %q: %v", text, err)
	case err == nil:
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		var theirs any
		if err := dec.Decode(&theirs); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		a, err1 := toNode(mine, 0)
		b, err2 := toNode(theirs, 0)
		if err1 != nil || err2 != nil {
			t.Fatalf("toNode: %v, %v", err1, err2)
		}
		if x, y := appendNode(nil, &a), appendNode(nil, &b); string(x) != string(y) {
			t.Fatalf("decoder reads %q as %s, encoding/json as %s", text, x, y)
		}
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
		o, err := Parse(text)
		if err != nil {
			checkSentinel(t, err)
			if !reflect.DeepEqual(o, Output{}) {
				t.Fatalf("Parse returned %#v with error %v", o, err)
			}
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
		if err != nil {
			t.Fatal(err)
		}
		written, werr := Parse(string(b))
		switch {
		case nerr != nil && werr != nil:
			for _, s := range sentinels {
				if errors.Is(nerr, s) != errors.Is(werr, s) {
					t.Fatalf("native error %v, written error %v", nerr, werr)
				}
			}
		case nerr != nil || werr != nil:
			t.Fatalf("native error %v, written error %v (%s)", nerr, werr, b)
		default:
			kn, err1 := Key(native)
			kw, err2 := Key(written)
			if err1 != nil || err2 != nil || kn != kw {
				t.Fatalf("native key %x (%v), written key %x (%v)", kn, err1, kw, err2)
			}
			if !reflect.DeepEqual(native, written) {
				t.Fatalf("native %#v, written %#v", native, written)
			}
			checkRoundTrip(t, native)
		}
	})
}
