package intent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonicalNumber(t *testing.T) {
	for in, want := range map[string]string{
		"0":                      "0",
		"-0":                     "0",
		"-0.000e7":               "0",
		"1":                      "1",
		"1.0":                    "1",
		"1e0":                    "1",
		"1E+0":                   "1",
		"10e-1":                  "1",
		"0.1e1":                  "1",
		"-1":                     "-1",
		"100":                    "100",
		"1e2":                    "100",
		"1.5":                    "1.5",
		"1.50":                   "1.5",
		"0.1":                    "0.1",
		"0.000001":               "0.000001",
		"1e-6":                   "0.000001",
		"1e-7":                   "1e-7",
		"0.00000012":             "1.2e-7",
		"123456789012345678901":  "123456789012345678901",       // 21 digits: plain
		"1234567890123456789012": "1.234567890123456789012e+21", // 22 digits: exponent
		"1e21":                   "1e+21",
		"1e20":                   "100000000000000000000",
		"-1.5e300":               "-1.5e+300",
		"12345678901234567890":   "12345678901234567890",
		"9007199254740993":       "9007199254740993",
		"0.30000000000000004":    "0.30000000000000004",
		"123.456e1":              "1234.56",
		"000":                    "",
	} {
		got, err := canonicalNumber(in)
		if want == "" {
			assert.Error(t, err, in)
			continue
		}
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		// Canonical text is valid JSON and a fixed point.
		again, err := canonicalNumber(got)
		require.NoError(t, err, got)
		assert.Equal(t, got, again)
		assert.True(t, json.Valid([]byte(got)), got)
	}
	for _, bad := range []string{"", "-", "+1", "01", "1.", ".5", "1e", "1e+", "0x10", "1_000", "Infinity", "NaN", "1e1234567890", " 1", "1 "} {
		_, err := canonicalNumber(bad)
		assert.Error(t, err, "%q", bad)
	}
	// Exponents of up to 9 digits are fine, leading zeros do not count.
	got, err := canonicalNumber("1e000000000000000005")
	require.NoError(t, err)
	assert.Equal(t, "100000", got)
	got, err = canonicalNumber("1e-999999999")
	require.NoError(t, err)
	assert.Equal(t, "1e-999999999", got)
}

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
