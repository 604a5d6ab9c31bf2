package intent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeStrings(t *testing.T) {
	for in, want := range map[string]string{
		`""`:                   "",
		`"abc"`:                "abc",
		`"é😀"`:                 "é😀",
		`"\u00e9\ud83d\ude00"`: "é😀",
		`"\"\\\/\b\f\n\r\t"`:   "\"\\/\b\f\n\r\t",
		`"\uFFFD"`:             "\uFFFD",
		`"a\u0000b"`:           "a\x00b",
	} {
		v, err := decodeJSON(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, v, in)
	}
}

// TestDecodeAgreesWithEncodingJSON: on valid JSON the decoder gives the same
// value as encoding/json (numbers compared canonically), and it accepts
// nothing encoding/json rejects.
func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":[1,2.5,-3e-2,{"b":null}],"c":"\u0041\n","d":true,"e":false,"f":{}}`,
		` [ ] `, `[[],[[]],{}]`, `"x"`, `0`, `-0.0`, `1E400`, `{"":""}`,
		`{"a" : 1 , "b":[ 1 , 2 ]}`, "\t\r\n{}\n",
	} {
		mine, err := decodeJSON(in)
		require.NoError(t, err, in)
		assertSameAsEncodingJSON(t, in, mine)
	}
	for _, in := range []string{
		`{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `[1 2]`, `01`, `1.`, `.1`, `+1`,
		`"\a"`, `"` + "\x01" + `"`, `[1]]`, `nul`, `truex`, `"abc`, `{"a":1}{}`, ``, ` `,
	} {
		_, err := decodeJSON(in)
		assert.Error(t, err, "%q", in)
		assert.False(t, json.Valid([]byte(in)), "%q", in)
	}
}

// assertSameAsEncodingJSON compares a decoded value with encoding/json's
// reading of the same text, through the canonical form.
func assertSameAsEncodingJSON(t testing.TB, in string, mine any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	var theirs any
	require.NoError(t, dec.Decode(&theirs), "encoding/json rejects %q", in)
	a, err := toNode(mine, 0)
	require.NoError(t, err)
	b, err := toNode(theirs, 0)
	require.NoError(t, err)
	assert.Equal(t, string(appendNode(nil, &b)), string(appendNode(nil, &a)), "%q", in)
}
