// Package secrets removes credentials from what a process writes: each
// secret as it is, in the forms encoding/json writes it inside a JSON
// string, and percent-encoded as a URL's query or path writes it, so that
// a key a model server echoes is caught in plain text, in JSON (a --json
// summary, a JSON log line, an MCP tool's structured result), in text
// that quotes JSON, and in an echoed URL or form alike.
//
// It is the one home of that replacement for maker/observe (the command's
// writers and log handlers) and maker/mcpserver (tool results and
// progress notifications).
package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces a secret.
const Redacted = "[REDACTED]"

// MinLen is the length in bytes of the shortest secret a Set holds: a
// shorter string would redact ordinary text.
const MinLen = 4

// Set holds secrets in every form Redact replaces: each secret as it is,
// as encoding/json writes it inside a string with HTML escaping (json.Marshal:
// `"` as \", `\` as \\, control characters, <, >, &, U+2028 and U+2029 as
// escapes, invalid UTF-8 as \ufffd) and without it
// (json.Encoder.SetEscapeHTML(false), as slog's JSON handler and most
// encoders write <, > and &), and percent-encoded as url.QueryEscape and
// url.PathEscape write it (sk-a+b/c as sk-a%2Bb%2Fc, sk-a+b%2Fc and
// sk-a%2Bb/c), with upper- and lower-case hex digits; each form once,
// longest first, so that a form holding another is replaced whole. A
// secret with nothing to escape has one form: itself.
//
// A Set is immutable once made (New, With), so it may be read by many
// goroutines at once; the zero value is an empty set.
type Set [][]byte

// New returns the set of secrets; those shorter than MinLen are left out.
func New(secrets ...string) Set { return Set(nil).With(secrets...) }

// With returns a new set holding s's secrets and secrets (those shorter
// than MinLen left out); s is not changed. Cost: five encodings of each
// new secret and a sort of the forms.
func (s Set) With(secrets ...string) Set {
	out := slices.Clone(s)
	for _, sec := range secrets {
		if len(sec) < MinLen {
			continue
		}
		for _, f := range forms(sec) {
			if !slices.ContainsFunc(out, func(g []byte) bool { return bytes.Equal(g, f) }) {
				out = append(out, f)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b []byte) int { return len(b) - len(a) })
	return out
}

// forms are sec as it is, as encoding/json writes it inside a string,
// with and without HTML escaping, and percent-encoded (percentForms).
func forms(sec string) [][]byte {
	html, err := json.Marshal(sec)
	if err != nil { // a string always marshals
		panic(err)
	}
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sec); err != nil {
		panic(err)
	}
	unquote := func(b []byte) []byte {
		return bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSuffix(b, []byte("\n")), []byte(`"`)), []byte(`"`))
	}
	out := [][]byte{[]byte(sec), unquote(html), unquote(plain.Bytes())}
	for _, p := range percentForms(sec) {
		out = append(out, []byte(p))
	}
	return out
}

// percentForms are sec as url.QueryEscape and url.PathEscape write it,
// and with lower-case hex digits (%2b: both are valid and servers write
// either); only those that differ from sec.
func percentForms(sec string) []string {
	var out []string
	for _, p := range []string{url.QueryEscape(sec), url.PathEscape(sec)} {
		if p == sec {
			continue
		}
		out = append(out, p, lowerHex(p))
	}
	return out
}

// lowerHex writes p's percent escapes with lower-case hex digits.
func lowerHex(p string) string {
	b := []byte(p)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerDigit(b[i+1]), lowerDigit(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerDigit(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// Redact returns b with every occurrence of each form of each secret
// replaced by Redacted, longest form first, and whether it held one. It
// never changes b: the result is b itself when nothing was found, a new
// slice otherwise. Cost: a scan of b per form, with no allocation when b
// holds none.
//
// It works on bytes, not on JSON: in JSON text a form may also match
// across an escape (the secret nabcd in "x\nabcd", which is x, a newline
// and abcd), redacting bytes that were not the secret and leaving the
// JSON invalid. RedactJSON never does.
func (s Set) Redact(b []byte) ([]byte, bool) {
	found := false
	for _, f := range s {
		if bytes.Contains(b, f) {
			b, found = bytes.ReplaceAll(b, f, []byte(Redacted)), true
		}
	}
	return b, found
}

// RedactString is Redact for a string.
func (s Set) RedactString(str string) (string, bool) {
	found := false
	for _, f := range s {
		if holds(str, f) {
			str, found = strings.ReplaceAll(str, string(f), Redacted), true
		}
	}
	return str, found
}

// holds reports whether str holds f: strings.Contains(str, string(f))
// without the conversion, which would allocate a copy of f on every call.
func holds(str string, f []byte) bool {
	if len(f) == 0 {
		return true
	}
	for i := 0; len(str)-i >= len(f); i++ {
		j := strings.IndexByte(str[i:], f[0])
		if j < 0 {
			return false
		}
		i += j
		if len(str)-i >= len(f) && str[i:i+len(f)] == string(f) {
			return true
		}
	}
	return false
}

// RedactJSON returns data, one JSON value, with each string in it (object
// keys too) redacted as RedactString redacts its decoded text, and whether
// one held a secret. The result is valid JSON; when it differs from data,
// object members are in key order, numbers are as data wrote them, and
// two keys redacted alike are one. A match of Redact across an escape or
// outside a string is not a secret held and leaves data as it is.
//
// Strings are looked for as encoding/json writes them (with or without
// HTML escaping): a secret escaped otherwise (\u0073k for sk) is not found.
//
// Errors: data is not one JSON value (json's syntax error, or a second
// value after the first); data is then
// returned unchanged. Cost: a scan of data per form, with no allocation
// when it holds none; a decoding and an encoding of data when one does.
func (s Set) RedactJSON(data []byte) ([]byte, bool, error) {
	if !slices.ContainsFunc(s, func(f []byte) bool { return bytes.Contains(data, f) }) {
		return data, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return data, false, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return data, false, fmt.Errorf("more than one JSON value")
	}
	v, found := s.redactValue(v)
	if !found {
		return data, false, nil
	}
	out, err := json.Marshal(v)
	if err != nil { // decoded JSON always encodes
		return data, false, err
	}
	return out, true, nil
}

// redactValue redacts every string of v, a decoded JSON value.
func (s Set) redactValue(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		return s.RedactString(v)
	case []any:
		found := false
		for i, e := range v {
			var f bool
			v[i], f = s.redactValue(e)
			found = found || f
		}
		return v, found
	case map[string]any:
		found := false
		out := make(map[string]any, len(v))
		for k, e := range v {
			k, fk := s.RedactString(k)
			e, fe := s.redactValue(e)
			out[k] = e
			found = found || fk || fe
		}
		return out, found
	}
	return v, false // numbers, booleans, null
}
