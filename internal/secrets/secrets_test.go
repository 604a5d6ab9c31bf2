package secrets_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/internal/secrets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func strs(s secrets.Set) []string {
	var out []string
	for _, f := range s {
		out = append(out, string(f))
	}
	return out
}

// Each secret is held as it is, as encoding/json writes it, with and
// without HTML escaping, and percent-encoded (query and path escaping,
// upper- and lower-case hex); each form once, longest first.
func TestSetHoldsEachJSONFormOnce(t *testing.T) {
	for _, c := range []struct {
		secret string
		want   []string
	}{
		{"sk-plain-0123", []string{"sk-plain-0123"}},
		{`sk-a"b<c`, []string{`sk-a\"b\u003cc`, "sk-a%22b%3Cc", "sk-a%22b%3cc", `sk-a\"b<c`, `sk-a"b<c`}},
		{`sk\x&y>z`, []string{`sk\\x\u0026y\u003ez`, "sk%5Cx%26y%3Ez", "sk%5cx%26y%3ez", "sk%5Cx&y%3Ez", "sk%5cx&y%3ez", `sk\\x&y>z`, `sk\x&y>z`}},
		{"sk-\n\t\x01-\u2028", []string{"sk-%0A%09%01-%E2%80%A8", "sk-%0a%09%01-%e2%80%a8", `sk-\n\t\u0001-\u2028`, "sk-\n\t\x01-\u2028"}},
		{"sk-\xff-bad-utf8", []string{`sk-\ufffd-bad-utf8`, "sk-%FF-bad-utf8", "sk-%ff-bad-utf8", "sk-\xff-bad-utf8"}},
	} {
		assert.Equal(t, c.want, strs(secrets.New(c.secret)), "%q", c.secret)
	}
	assert.Empty(t, secrets.New("abc", ""), "under MinLen bytes: not a secret")
	assert.Equal(t, []string{"abcd-and-more", "abcd"}, strs(secrets.New("abcd", "abcd-and-more", "abcd")), "longest first, once")
}

// A key a server echoes percent-encoded (in a URL or a form it quotes)
// is redacted in each way it may be written: + and / escaped or not, hex
// digits in either case; a text holding none is left as it is.
func TestRedactFindsPercentEncodedKeys(t *testing.T) {
	const key = "sk-a+b/c=d9f3"
	s := secrets.New(key)
	for _, echoed := range []string{"sk-a%2Bb%2Fc%3Dd9f3", "sk-a%2bb%2fc%3dd9f3", "sk-a+b%2Fc=d9f3", "sk-a+b%2fc=d9f3", key} {
		got, found := s.Redact([]byte(`{"error":"bad key ` + echoed + `"}`))
		assert.True(t, found, echoed)
		assert.Equal(t, `{"error":"bad key [REDACTED]"}`, string(got), echoed)
		str, found := s.RedactString("token=" + echoed + "&x=1")
		assert.True(t, found, echoed)
		assert.Equal(t, "token=[REDACTED]&x=1", str, echoed)
	}
	got, found := s.Redact([]byte("sk-a%2Bb other text"))
	assert.False(t, found)
	assert.Equal(t, "sk-a%2Bb other text", string(got))
}

// With leaves the set it is called on as it was, even when the caller
// keeps both.
func TestWithMakesANewSet(t *testing.T) {
	a := secrets.New("first-secret")
	b := a.With("second-secret-longer")
	c := a.With("third-secret")
	assert.Equal(t, []string{"first-secret"}, strs(a))
	assert.Equal(t, []string{"second-secret-longer", "first-secret"}, strs(b))
	assert.Equal(t, []string{"first-secret", "third-secret"}, strs(c), "the same length: the order they came in")
}

// What encoding/json writes of a text holding a secret, with or without
// HTML escaping, redacted, is valid JSON whose text is the redacted text;
// so is the plain text.
func TestRedactFindsEveryFormEncodingJSONWrites(t *testing.T) {
	for _, sec := range []string{"sk-plain-0123", `sk-a"b<c`, `sk\x&y>z`, "sk-\n\t\x01-\u2028", "sk-\u2029\\\"<>&-mix"} {
		s := secrets.New(sec)
		text := "refused " + sec + " (key " + sec + ")"
		const want = "refused [REDACTED] (key [REDACTED])"
		got, found := s.Redact([]byte(text))
		assert.True(t, found)
		assert.Equal(t, want, string(got), "%q as text", sec)
		gotS, found := s.RedactString(text)
		assert.True(t, found)
		assert.Equal(t, want, gotS, "%q as a string", sec)
		for _, html := range []bool{true, false} {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(html)
			require.NoError(t, enc.Encode(map[string]string{"error": text}))
			red, found := s.Redact(buf.Bytes())
			assert.True(t, found, "%q in %s", sec, buf.Bytes())
			var back map[string]string
			require.NoError(t, json.Unmarshal(red, &back), "%s", red)
			assert.Equal(t, want, back["error"], "%q in JSON, HTML escaping %v", sec, html)
		}
	}
}

// A form that holds another's is replaced whole, whichever came first.
func TestRedactReplacesTheLongestFormFirst(t *testing.T) {
	s := secrets.New("abcd1234", "abcd1234WXYZ", `ab"cd`, `xab"cdx`)
	got, _ := s.RedactString(`long abcd1234WXYZ short abcd1234 q xab\"cdx ab\"cd`)
	assert.Equal(t, "long [REDACTED] short [REDACTED] q [REDACTED] [REDACTED]", got)
}

// Nothing found: the input itself comes back, and nothing is allocated.
func TestRedactWithoutASecretCostsNoAllocation(t *testing.T) {
	s := secrets.New(strings.Repeat("k", 100), `sk-a"b<c`)
	text := strings.Repeat("an ordinary line with no key, k k k sk-a ", 20)
	b := []byte(text)
	got, found := s.Redact(b)
	assert.False(t, found)
	assert.Same(t, &b[0], &got[0], "b itself")
	gotS, found := s.RedactString(text)
	assert.False(t, found)
	assert.Equal(t, text, gotS)
	js := []byte(`{"a":"` + text + `"}`)
	gotJ, found, err := s.RedactJSON(js)
	require.NoError(t, err)
	assert.False(t, found)
	assert.Same(t, &js[0], &gotJ[0], "data itself")
	assert.Zero(t, testing.AllocsPerRun(100, func() { s.Redact(b) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { s.RedactString(text) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { s.RedactJSON(js) }))
}

// RedactString finds a secret wherever it starts, also after a near miss
// on its first byte and at the very end.
func TestRedactStringFindsASecretAfterANearMiss(t *testing.T) {
	s := secrets.New("abcd")
	for in, want := range map[string]string{
		"abcabcd": "abc[REDACTED]", "aabcd": "a[REDACTED]", "abcd": "[REDACTED]", "abc": "abc", "xabc": "xabc",
	} {
		got, found := s.RedactString(in)
		assert.Equal(t, want, got, in)
		assert.Equal(t, want != in, found, in)
	}
}

// RedactJSON redacts keys and values, keeps numbers as they were written,
// and leaves a match across an escape alone (Redact would break the JSON).
func TestRedactJSON(t *testing.T) {
	s := secrets.New(`sk-a"b<c`, "nabcd")
	in := []byte(`{"n":12345678901234567890.50,"sk-a\"b\u003cc":["x sk-a\"b<c y",true,null],"t":"x\nabcd"}`)
	got, found, err := s.RedactJSON(in)
	require.NoError(t, err)
	assert.True(t, found)
	assert.JSONEq(t, `{"n":12345678901234567890.50,"[REDACTED]":["x [REDACTED] y",true,null],"t":"x\nabcd"}`, string(got))
	assert.Contains(t, string(got), "12345678901234567890.50", "the number as written")

	across := []byte(`{"t":"x\nabcd"}`)
	bad, found := s.Redact(across)
	assert.True(t, found)
	assert.False(t, json.Valid(bad), "Redact matched across the escape: %s", bad)
	got, found, err = s.RedactJSON(across)
	require.NoError(t, err)
	assert.False(t, found, "no string holds nabcd")
	assert.Equal(t, string(across), string(got))

	for _, bad := range []string{`{"t":"nabcd"`, `"nabcd" "x"`} {
		got, found, err = s.RedactJSON([]byte(bad))
		assert.Error(t, err, bad)
		assert.False(t, found)
		assert.Equal(t, bad, string(got), "unchanged")
	}
}
