package intent_test

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"testing"

	"github.com/mitchellh/hashstructure/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/intent"
)

// sameKey asserts that all texts parse and share one key and canonical form.
func sameKey(t *testing.T, texts ...string) {
	t.Helper()
	first := mustParse(t, texts[0])
	k0, c0 := mustKey(t, first), canon(t, first)
	for _, s := range texts[1:] {
		o := mustParse(t, s)
		assert.Equal(t, k0, mustKey(t, o), "%q and %q vote apart", texts[0], s)
		assert.Equal(t, c0, canon(t, o), "%q and %q", texts[0], s)
		assert.Equal(t, first.Value, o.Value, "same key, different Value: %q and %q", texts[0], s)
	}
}

// allDiffer asserts that all texts parse and have pairwise different keys
// and canonical forms.
func allDiffer(t *testing.T, texts ...string) {
	t.Helper()
	keys := map[uint64]string{}
	canons := map[string]string{}
	for _, s := range texts {
		o := mustParse(t, s)
		k, c := mustKey(t, o), canon(t, o)
		prev, ok := keys[k]
		assert.False(t, ok, "%q and %q share key %x", prev, s, k)
		prev, ok = canons[c]
		assert.False(t, ok, "%q and %q share canonical form %s", prev, s, c)
		keys[k], canons[c] = s, s
	}
}

// The rules of DESIGN.md "Keys", one test each.

func TestKeyIgnoresKeyOrder(t *testing.T) {
	sameKey(t, `{"a":1,"b":{"x":[1,2],"y":null}}`, `{"b":{"y":null,"x":[1,2]},"a":1}`)
	sameKey(t, `{"tool":"t","args":{"p":1,"q":2}}`, `{"args":{"q":2,"p":1},"tool":"t"}`)
}

func TestKeyIgnoresWhiteSpace(t *testing.T) {
	sameKey(t, `{"a":[1,2],"b":"x y"}`, " {\n\t\"a\" : [ 1 ,\r\n 2 ] ,  \"b\":\"x y\"\n}\n ")
}

func TestKeyNumbersByValue(t *testing.T) {
	sameKey(t, `{"n":1}`, `{"n":1.0}`, `{"n":1e0}`, `{"n":1E+0}`, `{"n":10e-1}`, `{"n":0.1e1}`, `{"n":1.000}`)
	sameKey(t, `{"n":0}`, `{"n":-0}`, `{"n":0.0}`, `{"n":-0e5}`)
	sameKey(t, `{"n":1500}`, `{"n":1.5e3}`, `{"n":15e2}`)
	sameKey(t, `{"n":1e21}`, `{"n":1000000000000000000000}`)
	allDiffer(t, `{"n":1}`, `{"n":-1}`, `{"n":1.5}`, `{"n":10}`, `{"n":0.1}`, `{"n":12345678901234567890}`, `{"n":12345678901234567891}`)
}

func TestKeyFencedInlineWholeNativeAlike(t *testing.T) {
	sameKey(t,
		`{"tool_intent":{"tool":"ls","args":{"d":"."}}}`,
		"```json\n{\"tool_intent\":{\"tool\":\"ls\",\"args\":{\"d\":\".\"}}}\n```",
		"```\n{\"tool\":\"ls\",\"args\":{\"d\":\".\"}}\n```",
		`I will call {"tool_name":"ls","arguments":"{\"d\":\".\"}"} now.`,
	)
	native := mustCalls(t, call("ls", `{"d": "."}`))
	assert.Equal(t, mustKey(t, mustParse(t, `{"tool":"ls","args":{"d":"."}}`)), mustKey(t, native))
}

func TestKeyIgnoresRationale(t *testing.T) {
	sameKey(t,
		`{"tool_intent":{"tool":"ls","rationale":"to see the files"}}`,
		`{"tool_intent":{"tool":"ls","rationale":"because"}}`,
		`{"tool_intent":{"tool":"ls"}}`,
	)
	a := intent.Output{Intent: &intent.ToolIntent{Tool: "ls", Rationale: "a"}}
	b := intent.Output{Intent: &intent.ToolIntent{Tool: "ls", Rationale: "b"}}
	assert.Equal(t, mustKey(t, a), mustKey(t, b))
	assert.NotContains(t, canon(t, a), "rationale")
}

func TestKeyNullIsNotZero(t *testing.T) {
	// hashstructure alone hashes nil like 0; the canonical form does not.
	allDiffer(t, `{"a":null}`, `{"a":0}`, `{"a":false}`, `{"a":""}`, `{"a":[]}`, `{"a":{}}`, `{"a":"null"}`, `{}`)
	allDiffer(t, `[null]`, `[0]`, `[false]`, `[""]`, `[]`)
	rawNil, err := hashstructure.Hash(map[string]any{"a": nil}, hashstructure.FormatV2, nil)
	require.NoError(t, err)
	rawZero, err := hashstructure.Hash(map[string]any{"a": 0}, hashstructure.FormatV2, nil)
	require.NoError(t, err)
	assert.Equal(t, rawNil, rawZero, "hashstructure's pitfall this package exists to avoid")
}

func TestKeyStringIsNotNumber(t *testing.T) {
	allDiffer(t, `{"a":"1"}`, `{"a":1}`, `{"a":"1.0"}`, `{"a":"true"}`, `{"a":true}`)
	allDiffer(t, `{"tool":"x","args":{"n":"1"}}`, `{"tool":"x","args":{"n":1}}`)
}

func TestKeyArraysAreOrderedLists(t *testing.T) {
	// Neither duplicates nor order are lost (hashstructure sets would XOR
	// duplicates away and ignore order).
	allDiffer(t, `["a","a"]`, `["a"]`, `[]`, `["a","a","a"]`, `["a","b"]`, `["b","a"]`, `["a","a","b"]`, `["b"]`)
	allDiffer(t, `{"m":[[1],[1]]}`, `{"m":[[1]]}`, `{"m":[]}`, `{"m":[[]]}`, `{"m":[[],[]]}`)
	// Structure is not flattened.
	allDiffer(t, `[[1,2],[3]]`, `[[1],[2,3]]`, `[1,2,3]`, `[[1,2,3]]`)
	allDiffer(t, `{"a":{"b":1}}`, `{"a":{"b":{}}}`, `{"ab":1}`, `{"a":["b",1]}`)
}

func TestKeyAnotherToolOrArgument(t *testing.T) {
	allDiffer(t,
		`{"tool":"read_file","args":{"path":"a"}}`,
		`{"tool":"write_file","args":{"path":"a"}}`, // another tool
		`{"tool":"read_file","args":{"path":"b"}}`,  // another value
		`{"tool":"read_file","args":{"file":"a"}}`,  // another name
		`{"tool":"read_file","args":{"path":"a","n":1}}`,
		`{"tool":"read_file","args":{"path":["a"]}}`,
		`{"tool":"read_file"}`,
	)
}

func TestKeyValueIntentBoth(t *testing.T) {
	allDiffer(t,
		`{"x":1}`,                            // value only
		`{"tool_intent":{"tool":"x"}}`,       // intent only
		`{"x":1,"tool_intent":{"tool":"x"}}`, // both
		`{"x":2,"tool_intent":{"tool":"x"}}`, // both, another value
		`{"tool_intent":{"tool":"x","args":{"x":1}}}`,
	)
	v := map[string]any{"x": 1}
	in := &intent.ToolIntent{Tool: "x"}
	keys := map[uint64]bool{}
	for _, o := range []intent.Output{{Value: v}, {Intent: in}, {Value: v, Intent: in}} {
		keys[mustKey(t, o)] = true
	}
	assert.Len(t, keys, 3)
}

func TestKeyNilAndEmptyArgs(t *testing.T) {
	nilArgs := intent.Output{Intent: &intent.ToolIntent{Tool: "ls"}}
	emptyArgs := intent.Output{Intent: &intent.ToolIntent{Tool: "ls", Args: map[string]any{}}}
	parsed := mustParse(t, `{"tool":"ls"}`)
	assert.Equal(t, mustKey(t, nilArgs), mustKey(t, emptyArgs))
	assert.Equal(t, mustKey(t, nilArgs), mustKey(t, parsed))
	assert.Equal(t, `{"tool_intent":{"args":{},"tool":"ls"}}`, canon(t, nilArgs))

	// Beside an intent, an empty object Value is no Value: a reply cannot
	// tell them apart.
	emptyValue := intent.Output{Value: map[string]any{}, Intent: nilArgs.Intent}
	assert.Equal(t, mustKey(t, nilArgs), mustKey(t, emptyValue))
	// Alone, the empty object is an answer of its own.
	k, err := intent.Key(intent.Output{Value: map[string]any{}})
	require.NoError(t, err)
	assert.NotEqual(t, mustKey(t, nilArgs), k)
}

func TestKeyHandBuiltOutputs(t *testing.T) {
	parsed := mustParse(t, `{"move":[1,0,2],"p":0.1,"name":"x","ok":true,"none":null}`)
	want := mustKey(t, parsed)
	type move struct {
		Move []int   `json:"move"`
		P    float64 `json:"p"`
		Name string  `json:"name"`
		OK   bool    `json:"ok"`
		None *int    `json:"none"`
	}
	for _, v := range []any{
		map[string]any{"move": []any{1, 0, 2}, "p": 0.1, "name": "x", "ok": true, "none": nil},
		map[string]any{"move": []any{int64(1), uint8(0), float32(2)}, "p": json.Number("1e-1"), "name": "x", "ok": true, "none": nil},
		map[string]any{"move": []int{1, 0, 2}, "p": 0.1, "name": "x", "ok": true, "none": (*int)(nil)},
		move{Move: []int{1, 0, 2}, P: 0.1, Name: "x", OK: true},
		&move{Move: []int{1, 0, 2}, P: 0.1, Name: "x", OK: true},
		json.RawMessage(`{"none":null,"ok":true,"name":"x","p":0.10,"move":[1,0,2]}`),
	} {
		k, err := intent.Key(intent.Output{Value: v})
		require.NoError(t, err, "%#v", v)
		assert.Equal(t, want, k, "%#v", v)
	}
	// Args too.
	a := intent.Output{Intent: &intent.ToolIntent{Tool: "t", Args: map[string]any{"n": 3, "l": []string{"a"}}}}
	assert.Equal(t, mustKey(t, mustParse(t, `{"tool":"t","args":{"n":3.0,"l":["a"]}}`)), mustKey(t, a))
}

func TestKeyErrors(t *testing.T) {
	self := map[string]any{}
	self["me"] = self
	for _, tc := range []struct {
		name string
		o    intent.Output
		err  error
		msg  string
	}{
		{"nothing", intent.Output{}, intent.ErrNoAnswer, "neither"},
		{"null value", intent.Output{Value: json.RawMessage("null")}, intent.ErrNoAnswer, "neither"},
		{"empty tool", intent.Output{Intent: &intent.ToolIntent{}}, intent.ErrInvalidIntent, "empty tool name"},
		{"bad utf8 tool", intent.Output{Intent: &intent.ToolIntent{Tool: "\xff"}}, intent.ErrInvalidIntent, "UTF-8"},
		{"NaN", intent.Output{Value: math.NaN()}, intent.ErrMalformed, "not JSON"},
		{"Inf arg", intent.Output{Intent: &intent.ToolIntent{Tool: "t", Args: map[string]any{"x": math.Inf(1)}}}, intent.ErrMalformed, "not JSON"},
		{"channel", intent.Output{Value: make(chan int)}, intent.ErrMalformed, "chan int is not JSON"},
		{"bad number", intent.Output{Value: json.Number("1.2.3")}, intent.ErrMalformed, "invalid number"},
		{"bad utf8", intent.Output{Value: "\xff"}, intent.ErrMalformed, "UTF-8"},
		{"bad utf8 key", intent.Output{Value: map[string]any{"\xff": 1}}, intent.ErrMalformed, "UTF-8"},
		{"cycle", intent.Output{Value: self}, intent.ErrMalformed, "nesting deeper than 512"},
		{"scalar beside intent", intent.Output{Value: 42, Intent: &intent.ToolIntent{Tool: "t"}}, intent.ErrAmbiguous, "must be a JSON object, not a number"},
		{"tool_intent in value", intent.Output{Value: map[string]any{"tool_intent": 1}}, intent.ErrAmbiguous, `"tool_intent" key`},
		{"tool_intent beside intent", intent.Output{Value: map[string]any{"tool_intent": 1}, Intent: &intent.ToolIntent{Tool: "t"}}, intent.ErrAmbiguous, `"tool_intent" key`},
		{"bare intent as value", intent.Output{Value: map[string]any{"tool": "t", "args": map[string]any{}}}, intent.ErrAmbiguous, "bare tool intent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := intent.Key(tc.o)
			require.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.msg)
			_, err = intent.Canonical(tc.o)
			require.ErrorIs(t, err, tc.err)
		})
	}
}

func TestCanonicalText(t *testing.T) {
	for text, want := range map[string]string{
		`{ "b" : [1.50, "x\u0041\n\"\\/"], "a" : {"z":null,"y":true} }`:                 `{"a":{"y":true,"z":null},"b":[1.5,"xA\n\"\\/"]}`,
		`{"s":"<&>\u00e9\u2028\ud83d\ude00\u0001"}`:                                     "{\"s\":\"<&>é\u2028😀\\u0001\"}",
		`{"n":[100, 1e2, 0.00001, 1e-7, 123.4500, 1e21, 1.5e300, -2.0E-3]}`:             `{"n":[100,100,0.00001,1e-7,123.45,1e+21,1.5e+300,-0.002]}`,
		`{"z":1,"tool_intent":{"tool":"t","args":{"b":2,"a":1},"rationale":"r"},"a":0}`: `{"a":0,"tool_intent":{"args":{"a":1,"b":2},"tool":"t"},"z":1}`,
		`{"tool_intent":{"tool":"t"},"u":1}`:                                            `{"tool_intent":{"args":{},"tool":"t"},"u":1}`,
		`{"tool_intent":{"tool":"t"},"tool_intentz":1,"tool_i":2}`:                      `{"tool_i":2,"tool_intent":{"args":{},"tool":"t"},"tool_intentz":1}`,
		`"plain"`: `"plain"`,
		`[]`:      `[]`,
	} {
		got := canon(t, mustParse(t, text))
		assert.Equal(t, want, got, text)
		// Canonical text is a fixed point: it parses back to itself.
		assert.Equal(t, want, canon(t, mustParse(t, got)), text)
	}
}

// TestKeyGolden pins key values: keys must not change by accident (a
// changed key splits votes between processes running different builds).
// If the canonical form or the hash is changed on purpose, update these
// values and say so in the change log.
func TestKeyGolden(t *testing.T) {
	for text, want := range map[string]uint64{
		hanoiCanon:    0xeb55a91d10769fcc,
		readFileCanon: 0x1da0c2cb5750f016,
		`{"x":null}`:  0x98f2a60acd56fc04,
	} {
		got := mustKey(t, mustParse(t, text))
		assert.Equal(t, want, got, "%s: key %#x", text, got)
	}
}

// TestKeyIsFNV1aOfTheCanonicalText checks the documented definition
// against two independent computations: the standard library's FNV-1a
// over the canonical bytes, and hashstructure's FormatV2 hash of the text.
func TestKeyIsFNV1aOfTheCanonicalText(t *testing.T) {
	for _, text := range []string{hanoiCanon, readFileCanon, `{"x":null}`, `[]`, `"s"`, `{"tool":"ls"}`} {
		o := mustParse(t, text)
		c, err := intent.Canonical(o)
		require.NoError(t, err)
		h := fnv.New64a()
		h.Write(c)
		assert.Equal(t, h.Sum64(), mustKey(t, o), text)
		assert.Equal(t, h.Sum64(), intent.KeyOf(c), text)
		hs, err := hashstructure.Hash(string(c), hashstructure.FormatV2, &hashstructure.HashOptions{Hasher: fnv.New64a()})
		require.NoError(t, err)
		assert.Equal(t, hs, intent.KeyOf(c), text)
	}
}

// TestKeyOfNeverZero: the bytes below are a known FNV-1a (64-bit) preimage
// of 0; KeyOf maps that hash to ZeroHashKey.
func TestKeyOfNeverZero(t *testing.T) {
	zero := []byte{0xd5, 0x6b, 0xb9, 0x53, 0x42, 0x87, 0x08, 0x36}
	h := fnv.New64a()
	h.Write(zero)
	require.Zero(t, h.Sum64(), "the preimage (else this test proves nothing)")
	assert.Equal(t, intent.ZeroHashKey, intent.KeyOf(zero))
	assert.NotZero(t, intent.ZeroHashKey)
	assert.NotZero(t, intent.KeyOf(nil))
}

// TestKeyTypedNilValueBesideIntent: a nil map, a nil slice or JSON null as
// Value beside an intent is written exactly like no Value at all, so it
// must have the same key (the key is a function of the canonical text).
func TestKeyTypedNilValueBesideIntent(t *testing.T) {
	in := &intent.ToolIntent{Tool: "ls", Args: map[string]any{"d": "."}}
	none := intent.Output{Intent: in}
	want, wantCanon := mustKey(t, none), canon(t, none)
	for name, v := range map[string]any{
		"nil map":    map[string]any(nil),
		"nil slice":  []any(nil),
		"JSON null":  json.RawMessage("null"),
		"nil *int":   (*int)(nil),
		"empty map":  map[string]any{},
		"nil struct": (*struct{ A int })(nil),
	} {
		o := intent.Output{Value: v, Intent: in}
		assert.Equal(t, wantCanon, canon(t, o), name)
		assert.Equal(t, want, mustKey(t, o), "%s: same canonical text, so the same key", name)
	}
}

// TestKeyTopLevelRationale: a "rationale" beside "tool_intent" is the
// intent's rationale, like the one inside it: never part of Value or Key.
func TestKeyTopLevelRationale(t *testing.T) {
	sameKey(t,
		`{"tool_intent":{"tool":"ls"}}`,
		`{"tool_intent":{"tool":"ls"},"rationale":"to see the files"}`,
		`{"rationale":"because","tool_intent":{"tool":"ls","rationale":"inner"}}`,
	)
	sameKey(t,
		`{"status":"x","tool_intent":{"tool":"ls"}}`,
		`{"status":"x","tool_intent":{"tool":"ls"},"rationale":"r"}`,
	)
	o := mustParse(t, `{"tool_intent":{"tool":"ls"},"rationale":"outer"}`)
	assert.Nil(t, o.Value, "the rationale is not an answer")
	require.NotNil(t, o.Intent)
	assert.Equal(t, "outer", o.Intent.Rationale, "the top-level rationale fills an empty inner one")
	o = mustParse(t, `{"tool_intent":{"tool":"ls","rationale":"inner"},"rationale":"outer","v":1}`)
	assert.Equal(t, "inner", o.Intent.Rationale, "the inner rationale wins")
	assert.Equal(t, map[string]any{"v": json.Number("1")}, o.Value)

	// Like the inner one, it must be a string.
	_, err := intent.Parse(`{"tool_intent":{"tool":"ls"},"rationale":42}`)
	require.ErrorIs(t, err, intent.ErrInvalidIntent)
	// Beside a null intent it is not an answer either.
	_, err = intent.Parse(`{"tool_intent":null,"rationale":"nothing to do"}`)
	require.ErrorIs(t, err, intent.ErrNoAnswer)
	// Without "tool_intent", "rationale" is an ordinary answer key.
	o = mustParse(t, `{"move":[1,0,2],"rationale":"r"}`)
	assert.Contains(t, o.Value, "rationale")
	// A hand-built Value beside an intent cannot hold "rationale": Parse
	// would read it back as the intent's rationale.
	_, err = intent.Key(intent.Output{Value: map[string]any{"rationale": "r"}, Intent: &intent.ToolIntent{Tool: "ls"}})
	require.ErrorIs(t, err, intent.ErrAmbiguous)
}
