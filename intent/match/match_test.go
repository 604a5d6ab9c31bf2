package match

import (
	"encoding/json"
	"errors"
	"github.com/mdap-go/mdap/intent"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cityContract = `{
  "type": "object",
  "properties": {
    "city": {"type": "string", "x-mdap-match": "text"},
    "temp": {"type": "number", "x-mdap-match": {"kind": "number", "tolerance": 0.5}},
    "tags": {"type": "array", "x-mdap-match": "set", "items": {"type": "string", "x-mdap-match": "text"}},
    "note": {"type": "string"}
  }
}`

func answer(t *testing.T, js string) intent.Output {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(js), &v))
	return intent.Output{Value: v}
}

func TestMatcherKeysTextAndSetByNormalForm(t *testing.T) {
	m, err := New([]byte(cityContract))
	require.NoError(t, err)
	require.True(t, m.Tolerant())
	key := func(js string) uint64 {
		k, err := m.Key(answer(t, js))
		require.NoError(t, err)
		return k
	}
	same := [][2]string{
		{`{"city":"Paris"}`, `{"city":"paris."}`},
		{`{"city":"Paris"}`, `{"city":" PARIS "}`},
		{`{"city":"New  York"}`, `{"city":"new york!"}`},
		{`{"city":"Café"}`, "{\"city\":\"cafe\u0301\"}"}, // NFC: é composed and decomposed
		{`{"tags":["a","B"]}`, `{"tags":["b","A"]}`},
	}
	for _, p := range same {
		assert.Equal(t, key(p[0]), key(p[1]), "%s and %s vote together", p[0], p[1])
	}
	differ := [][2]string{
		{`{"city":"Paris"}`, `{"city":"Pari"}`},
		{`{"city":"a.b"}`, `{"city":"ab"}`},               // only trailing punctuation goes
		{`{"tags":["a","a"]}`, `{"tags":["a"]}`},          // a multiset
		{`{"note":"Paris"}`, `{"note":"paris"}`},          // not annotated: exact
		{`{"temp":1.0}`, `{"temp":1.25}`},                 // a tolerance is no key
		{`{"city":"Paris","temp":1}`, `{"city":"Paris"}`}, // a missing field
	}
	for _, p := range differ {
		assert.NotEqual(t, key(p[0]), key(p[1]), "%s and %s do not share a key", p[0], p[1])
	}
	// A nil matcher is intent.Key.
	o := answer(t, `{"city":"Paris"}`)
	var none *Matcher
	k1, _ := none.Key(o)
	k2, _ := intent.Key(o)
	assert.Equal(t, k2, k1)
}

func TestMatcherMatchNumbersWithinTolerance(t *testing.T) {
	m, err := New([]byte(cityContract))
	require.NoError(t, err)
	match := func(a, b string) bool { return m.Match(answer(t, a), answer(t, b)) }
	assert.True(t, match(`{"temp":1.0,"city":"Paris"}`, `{"temp":1.5,"city":"paris."}`))
	assert.True(t, match(`{"temp":1.5}`, `{"temp":1.0}`), "symmetric")
	assert.False(t, match(`{"temp":1.0}`, `{"temp":1.51}`))
	assert.False(t, match(`{"temp":1.0,"note":"x"}`, `{"temp":1.0,"note":"X"}`))
	assert.False(t, match(`{"temp":1.0}`, `{"temp":"1.0"}`), "a string is not a number")
	// Not transitive: why it needs the race's seam.
	assert.True(t, match(`{"temp":1.0}`, `{"temp":1.4}`))
	assert.True(t, match(`{"temp":1.4}`, `{"temp":1.8}`))
	assert.False(t, match(`{"temp":1.0}`, `{"temp":1.8}`))
}

func TestMatcherWithoutAnnotationsIsNil(t *testing.T) {
	m, err := New([]byte(`{"type":"object","properties":{"a":{"type":"string","x-mdap-match":"exact"}}}`))
	require.NoError(t, err)
	assert.Nil(t, m)
	assert.False(t, m.Tolerant())
}

func TestMatcherRefusesBadAnnotations(t *testing.T) {
	for name, c := range map[string]struct{ schema, field, says string }{
		"unknown kind":   {`{"properties":{"a":{"x-mdap-match":"fuzzy"}}}`, "/properties/a/x-mdap-match", `"fuzzy" is not a matcher`},
		"no threshold":   {`{"properties":{"a":{"x-mdap-match":"embedding"}}}`, "/properties/a/x-mdap-match", `needs a "threshold"`},
		"threshold > 1":  {`{"properties":{"a":{"x-mdap-match":{"kind":"embedding","threshold":1.5,"model":"ollama:e"}}}}`, "/properties/a/x-mdap-match", `needs a "threshold"`},
		"no embedder":    {`{"properties":{"a":{"x-mdap-match":{"kind":"embedding","threshold":0.9}}}}`, "/properties/a/x-mdap-match", `needs a "model"`},
		"bad provider":   {`{"properties":{"a":{"x-mdap-match":{"kind":"embedding","threshold":0.9,"model":"acme:e"}}}}`, "/properties/a/x-mdap-match", `not ollama or openai`},
		"no judge":       {`{"properties":{"a":{"x-mdap-match":"judge"}}}`, "/properties/a/x-mdap-match", `a judge needs a "model"`},
		"judge in items": {`{"properties":{"a":{"items":{"x-mdap-match":{"kind":"judge","model":"ollama:j"}}}}}`, "/properties/a/items/x-mdap-match", `under "items"`},
		"two judges":     {`{"properties":{"a":{"x-mdap-match":{"kind":"judge","model":"ollama:j"}},"b":{"x-mdap-match":{"kind":"judge","model":"ollama:j"}}}}`, "/properties/b/x-mdap-match", `one judge per answer`},
		"code language":  {`{"properties":{"a":{"x-mdap-match":{"kind":"code","language":"cobol"}}}}`, "/properties/a/x-mdap-match", `no normaliser for language "cobol"`},
		"code on number": {`{"properties":{"a":{"type":"number","x-mdap-match":"code"}}}`, "/properties/a/x-mdap-match", "applies to string values"},
		"bad seed":       {`{"properties":{"a":{"x-mdap-match":{"kind":"judge","model":"ollama:j","seed":-1}}}}`, "/properties/a/x-mdap-match", `"seed"`},
		"no tolerance":   {`{"properties":{"a":{"x-mdap-match":"number"}}}`, "/properties/a/x-mdap-match", `positive "tolerance"`},
		"bad tolerance":  {`{"properties":{"a":{"x-mdap-match":{"kind":"number","tolerance":-1}}}}`, "/properties/a/x-mdap-match", `positive "tolerance"`},
		"zero tolerance": {`{"properties":{"a":{"x-mdap-match":{"kind":"number","tolerance":0}}}}`, "/properties/a/x-mdap-match", `positive "tolerance"`},
		"number on text": {`{"properties":{"a":{"type":"string","x-mdap-match":{"kind":"number","tolerance":1}}}}`, "/properties/a/x-mdap-match", "applies to number values"},
		"unknown key":    {`{"properties":{"a":{"x-mdap-match":{"kind":"text","case":true}}}}`, "/properties/a/x-mdap-match", `unknown key "case"`},
		"wrong type":     {`{"properties":{"a":{"type":"integer","x-mdap-match":"text"}}}`, "/properties/a/x-mdap-match", "applies to string values"},
		"set of embeds":  {`{"properties":{"a":{"x-mdap-match":"set","items":{"x-mdap-match":{"kind":"embedding","threshold":0.9,"model":"ollama:e"}}}}}`, "/properties/a/items/x-mdap-match", "inside a \"set\""},
		"set of numbers": {`{"properties":{"a":{"x-mdap-match":"set","items":{"x-mdap-match":{"kind":"number","tolerance":1}}}}}`, "/properties/a/items/x-mdap-match", "inside a \"set\""},
		"unreached":      {`{"anyOf":[{"properties":{"a":{"x-mdap-match":"text"}}}]}`, "/anyOf/0/properties/a/x-mdap-match", "move it there"},
	} {
		_, err := New([]byte(c.schema))
		require.ErrorIs(t, err, ErrMatcher, name)
		assert.Contains(t, err.Error(), c.field, name)
		assert.Contains(t, err.Error(), c.says, name)
	}
	_, err := New([]byte(`{`))
	assert.True(t, errors.Is(err, intent.ErrMalformed))
}

func TestNormalText(t *testing.T) {
	for in, want := range map[string]string{"Paris": "paris", "paris.": "paris", " PARIS ": "paris", "Straße": "strasse", "a\t\n b?!": "a b", "¿Qué?": "¿qué"} {
		assert.Equal(t, want, NormalText(in), in)
	}
}

// FuzzMatcherAgreesWithItsKey checks the contract vote.Match needs:
// reflexive, symmetric, and equal keys always match.
func FuzzMatcherAgreesWithItsKey(f *testing.F) {
	for _, s := range [][2]string{
		{`{"city":"Paris","temp":1}`, `{"city":"paris.","temp":1.4}`},
		{`{"tags":["a","a"]}`, `{"tags":["A","a "]}`},
		{`{"temp":1e2}`, `{"temp":100.5}`},
		{`{"city":" ÉTÉ!! "}`, "{\"city\":\"e\u0301te\u0301\"}"},
		{`{"note":[1,{"x":null}]}`, `{"note":[1,{"x":0}]}`},
	} {
		f.Add(s[0], s[1])
	}
	m, err := New([]byte(cityContract))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, a, b string) {
		var va, vb any
		if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
			return
		}
		oa, ob := intent.Output{Value: va}, intent.Output{Value: vb}
		ka, errA := m.Key(oa)
		kb, errB := m.Key(ob)
		if errA != nil || errB != nil {
			return
		}
		assert.True(t, m.Match(oa, oa), "reflexive: %s", a)
		assert.Equal(t, m.Match(oa, ob), m.Match(ob, oa), "symmetric: %s, %s", a, b)
		if ka == kb {
			assert.True(t, m.Match(oa, ob), "equal keys match: %s, %s", a, b)
		}
	})
}

// TestMatcherToleranceIsTheNumbersOnly: only a number tolerance makes a
// matcher Tolerant (a text or set matcher is a normal form: equal keys
// only), and a number annotation fits an "integer" field as well as a
// "number" one.
func TestMatcherToleranceIsTheNumbersOnly(t *testing.T) {
	for schema, want := range map[string]bool{
		`{"properties":{"a":{"type":"string","x-mdap-match":"text"}}}`:                                   false,
		`{"properties":{"a":{"type":"array","x-mdap-match":"set"}}}`:                                     false,
		`{"properties":{"a":{"type":"integer","x-mdap-match":{"kind":"number","tolerance":2}}}}`:         true,
		`{"properties":{"a":{"type":["number","null"],"x-mdap-match":{"kind":"number","tolerance":2}}}}`: true,
	} {
		m, err := New([]byte(schema))
		require.NoError(t, err, schema)
		assert.Equal(t, want, m.Tolerant(), schema)
	}
}
