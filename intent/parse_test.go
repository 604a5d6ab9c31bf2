package intent_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/intent"
)

func mustParse(t testing.TB, text string) intent.Output {
	t.Helper()
	o, err := intent.Parse(text)
	require.NoError(t, err, "%q", text)
	return o
}

func mustKey(t testing.TB, o intent.Output) uint64 {
	t.Helper()
	k, err := intent.Key(o)
	require.NoError(t, err)
	return k
}

func canon(t testing.TB, o intent.Output) string {
	t.Helper()
	c, err := intent.Canonical(o)
	require.NoError(t, err)
	return string(c)
}

func TestParseWhereTheAnswerIs(t *testing.T) {
	const want = `{"move":[1,0,2]}`
	for _, text := range []string{
		`{"move":[1,0,2]}`,
		"  \n{\n  \"move\": [1, 0, 2]\n}\n\n",
		"\ufeff{\"move\":[1,0,2]}",
		"```json\n{\"move\":[1,0,2]}\n```",
		"```JSON\n{\"move\":[1,0,2]}\n```",
		"```Json  extra info\n{\"move\":[1,0,2]}\n```",
		"```json\ttitle\n{\"move\":[1,0,2]}\n```",
		"```\n{\"move\":[1,0,2]}\n```",
		"Answer:\n   ```json\n   {\"move\":[1,0,2]}\n   ```\nDone.",
		"````json\n{\"move\":[1,0,2]}\n`````", // a closer at least as long as the opener
		"```json\n{\"move\":[1,0,2]}",         // unclosed fence: runs to the end
		"```json\r\n{\"move\":[1,0,2]}\r\n```\r\n",
		`The move is {"move":[1,0,2]} done.`,
		"The move is `{\"move\": [1, 0, 2]}`.",
		"The move is\n{\n  \"move\": [1, 0, 2]\n}\nas computed.", // an object over several lines
		"```{\"move\":[1,0,2]}```",                               // not a fence (backtick in info): inline
		"```python\nprint({\"move\": [9]})\n```\nSo: {\"move\":[1,0,2]}",
		"```\nls -la\n```\n{\"move\":[1,0,2]}",         // a bare fence that is not JSON is skipped
		"Use {braces} as you like, {\"move\":[1,0,2]}", // '{' not followed by '"' is prose
	} {
		o, err := intent.Parse(text)
		require.NoError(t, err, "%q", text)
		assert.Equal(t, want, canon(t, o), "%q", text)
	}
}

func TestParseWholeReplyValues(t *testing.T) {
	for text, want := range map[string]any{
		`[1, 0, 2]`:           []any{json.Number("1"), json.Number("0"), json.Number("2")},
		"```json\n[1]\n```":   []any{json.Number("1")},
		`42`:                  json.Number("42"),
		` 4.20 `:              json.Number("4.2"),
		`"forty two"`:         "forty two",
		`true`:                true,
		"```json\nfalse\n```": false,
		`{}`:                  map[string]any{},
	} {
		o, err := intent.Parse(text)
		require.NoError(t, err, "%q", text)
		assert.Equal(t, want, o.Value, "%q", text)
		assert.Nil(t, o.Intent)
	}
}

func TestParseToolIntentSpellings(t *testing.T) {
	want := mustKey(t, mustParse(t, `{"tool_intent":{"tool":"grep","args":{"pattern":"x"}}}`))
	for _, text := range []string{
		`{"tool_intent":{"tool_name":"grep","args":{"pattern":"x"}}}`,
		`{"tool_intent":{"name":"grep","arguments":{"pattern":"x"}}}`,
		`{"tool_intent":{"tool":"grep","arguments":"{\"pattern\":\"x\"}"}}`,
		`{"tool_intent":{"args":{"pattern":"x"},"tool":"grep","rationale":"look"}}`,
		`{"tool_intent":{"tool":"grep","args":{"pattern":"x"},"rationale":null}}`,
		`{"tool_name":"grep","arguments":{"pattern":"x"}}`,
		`{"tool":"grep","args":{"pattern":"x"}}`,
		`{"tool":"grep","arguments":" {\"pattern\": \"x\"} ","rationale":"r"}`,
	} {
		o := mustParse(t, text)
		require.NotNil(t, o.Intent, text)
		assert.Nil(t, o.Value, text)
		assert.Equal(t, want, mustKey(t, o), text)
	}
}

func TestParseToolIntentWithValue(t *testing.T) {
	o := mustParse(t, `{"status":"waiting","tool_intent":{"tool":"ls"},"n":[1]}`)
	assert.Equal(t, map[string]any{"status": "waiting", "n": []any{json.Number("1")}}, o.Value)
	require.NotNil(t, o.Intent)
	assert.Equal(t, "ls", o.Intent.Tool)
	assert.Equal(t, map[string]any{}, o.Intent.Args)

	// "tool_intent": null means no intent; the other keys are the answer.
	o = mustParse(t, `{"tool_intent":null,"move":[1,0,2]}`)
	assert.Nil(t, o.Intent)
	assert.Equal(t, mustKey(t, mustParse(t, `{"move":[1,0,2]}`)), mustKey(t, o))

	_, err := intent.Parse(`{"tool_intent":null}`)
	assert.ErrorIs(t, err, intent.ErrNoAnswer)
}

// TestParseNotAnIntent: objects that only resemble an intent are values.
func TestParseNotAnIntent(t *testing.T) {
	for _, text := range []string{
		`{"name":"read_file","arguments":{}}`, // "name" is a spelling only inside tool_intent
		`{"tool":"hammer","count":3}`,         // a key outside the intent shape
		`{"tool_name":"x","arguments":{},"move":[1]}`,
		`{"args":{"a":1}}`,
	} {
		o := mustParse(t, text)
		assert.Nil(t, o.Intent, text)
		assert.NotNil(t, o.Value, text)
	}
}

func TestParseHealing(t *testing.T) {
	o := mustParse(t, `{"tool":"w","arguments":"{\"n\":1,\"s\":\"a b\"}"}`)
	assert.Equal(t, map[string]any{"n": json.Number("1"), "s": "a b"}, o.Intent.Args)

	for _, args := range []string{`""`, `"null"`, `null`, `{}`, `" "`} {
		o := mustParse(t, `{"tool":"w","args":`+args+`}`)
		assert.NotNil(t, o.Intent.Args, args)
		assert.Empty(t, o.Intent.Args, args)
	}
	o = mustParse(t, `{"tool":"w"}`)
	assert.NotNil(t, o.Intent.Args)
	assert.Empty(t, o.Intent.Args)

	// Healing decodes one level and only into an object; the rest fails.
	for args, msg := range map[string]string{
		`"\"{\\\"n\\\":1}\""`: "string holding a string",
		`"[1,2]"`:             "string holding an array",
		`"{n:1}"`:             "does not decode",
		`"{\"n\":1"`:          "does not decode",
		`[1,2]`:               "not an array",
		`7`:                   "not a number",
		`true`:                "not a boolean",
	} {
		_, err := intent.Parse(`{"tool":"w","args":` + args + `}`)
		require.ErrorIs(t, err, intent.ErrInvalidIntent, args)
		assert.ErrorContains(t, err, msg, args)
		assert.ErrorContains(t, err, "must be a JSON object", args)
	}
}

func TestParseInvalidIntent(t *testing.T) {
	for text, msg := range map[string]string{
		`{"tool_intent":"read_file"}`:                           `"tool_intent" must be an object, not a string`,
		`{"tool_intent":[]}`:                                    "not an array",
		`{"tool_intent":{}}`:                                    "no tool name",
		`{"tool_intent":{"args":{}}}`:                           "no tool name",
		`{"tool_intent":{"tool":""}}`:                           `tool name "tool" is empty`,
		`{"tool_intent":{"tool":null}}`:                         "must be a string, not null",
		`{"tool_intent":{"name":7}}`:                            "must be a string, not a number",
		`{"tool_intent":{"tool":"a","name":"a"}}`:               `both "tool" and "name"`,
		`{"tool_intent":{"tool":"a","args":{},"arguments":{}}}`: `both "args" and "arguments"`,
		`{"tool_intent":{"tool":"a","rationale":5}}`:            "rationale must be a string",
		`{"tool_intent":{"tool":"a","reason":"x"}}`:             `unexpected key "reason"`,
		`{"tool":"","args":{}}`:                                 "is empty",
		`{"tool":"a","tool_name":"b"}`:                          `both "tool" and "tool_name"`,
		"```json\n{\"tool_intent\":{\"tool\":false}}\n```":      "fenced block at byte 8",
		`{"tool_intent":{"tool":"a","args":["x"]}}`:             "args must be a JSON object, not an array",
		`{"tool_intent":{"tool":"a","arguments":"path=notes"}}`: "arguments must be a JSON object",
	} {
		_, err := intent.Parse(text)
		require.ErrorIs(t, err, intent.ErrInvalidIntent, text)
		assert.ErrorContains(t, err, msg, text)
	}
}

func TestParseMalformed(t *testing.T) {
	for text, msg := range map[string]string{
		"```json\n{\"move\":[1,0,2],}\n```":       "invalid character ',' at start of value at byte 23",
		"```json\n{\"a\":1}\n{\"a\":1}\n```":      "after the JSON value",
		"```json\n```":                            "unexpected end of input",
		"```json\n   \n```":                       "unexpected end of input",
		"```json\nnot json\n```":                  "invalid character 'o' in literal null",
		"````json\n{\"move\":[1,0,2]}\n```\n````": "after the JSON value", // a shorter line does not close a longer fence
		"{placeholder} and {other}":               "starts like JSON",
		`{"a":1,"a":2}`:                           `duplicate object key "a"`,
		"{\"a\":\"\xff\"}":                        "invalid UTF-8",
		`{"a":"\ud800"}`:                          "invalid surrogate pair",
		`{"a":"\udc00\ud800"}`:                    "invalid surrogate pair",
		"{\"a\":\"tab\there\"}":                   "control character",
		`{"a":01}`:                                "invalid character '1' after object value",
		`{"a":1.}`:                                "in number (expecting digit)",
		`{"a":1e}`:                                "in number (expecting digit)",
		`{"a":1e1234567890}`:                      "exponent out of range",
		`{"a":tru}`:                               "in literal true",
		`{"a":'x'}`:                               `invalid character '\'' at start of value`,
		`{"a":NaN}`:                               "invalid character 'N' at start of value",
		`{"a":"\x"}`:                              `invalid escape`,
		`{"a":"\u12"}`:                            `invalid escape sequence`,
		`{"a":1`:                                  "unexpected end of input",
		`The move is {"move": [1, 0, 2} done.`:    "(expecting ',' or ']')",
		`[1, 0, 2`:                                "starts like JSON",
		`{} is what I return`:                     "starts like JSON",
		"```json\n{\"a\":1}\n```\nor {\"a\": oops}": "inline object starting at byte",
	} {
		o, err := intent.Parse(text)
		require.ErrorIs(t, err, intent.ErrMalformed, "%q", text)
		assert.ErrorContains(t, err, msg, "%q", text)
		assert.Equal(t, intent.Output{}, o)
	}
}

func TestParseErrorOffsetsAreInTheOriginalText(t *testing.T) {
	text := "\n\n  Here: {\"a\": [1, 2,]}"
	_, err := intent.Parse(text)
	require.ErrorIs(t, err, intent.ErrMalformed)
	start := strings.Index(text, "{")
	bad := strings.Index(text, ",]") // the comma that closes nothing
	assert.ErrorContains(t, err, "inline object starting at byte "+strconv.Itoa(start))
	assert.ErrorContains(t, err, "at byte "+strconv.Itoa(bad))
}

func TestParseNoAnswer(t *testing.T) {
	for _, text := range []string{
		"", "   \n\t", "\ufeff", "I am not sure what to do.",
		"Use {placeholder} and {other}", "Move disk 1 (from peg A).", "3 disks",
		"null", "```json\nnull\n```",
		"```python\nx = {\"move\": [1]}\n```", // JSON inside another language's block
		"```\nsome shell\n```",
		strings.Repeat("`", 100),
	} {
		o, err := intent.Parse(text)
		require.ErrorIs(t, err, intent.ErrNoAnswer, "%q", text)
		assert.Equal(t, intent.Output{}, o)
	}
}

func TestParseRepeatedAndAmbiguous(t *testing.T) {
	// The same answer, restated in other spellings: one answer, the first.
	o, err := intent.Parse("```json\n{\"tool\":\"ls\",\"args\":{\"d\":1},\"rationale\":\"first\"}\n```\n" +
		`Again: {"tool_intent": {"name": "ls", "arguments": "{\"d\": 1.0}", "rationale": "second"}}`)
	require.NoError(t, err)
	assert.Equal(t, "first", o.Intent.Rationale)

	o, err = intent.Parse(`{"a":1} and {"a":1} and {"a": 1.0}`)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, canon(t, o))

	for _, text := range []string{
		`{"a":1} or {"a":2}`,
		`{"a":1} or {"a":"1"}`,
		`{"a":[1,1]} or {"a":[1]}`,
		"```json\n{\"a\":1}\n```\n```json\n{\"a\":2}\n```",
		"```json\n{\"a\":1}\n```\nThat is {\"b\":1}.",
		`{"tool":"ls"} or {"tool":"cat"}`,
		`{"tool":"ls"} or {"tool_intent":{"tool":"ls"},"x":1}`,
		`{"tool":"ls"} or {"tool":"ls","args":{"d":1}}`,
	} {
		_, err := intent.Parse(text)
		require.ErrorIs(t, err, intent.ErrAmbiguous, "%q", text)
		assert.ErrorContains(t, err, " says ", "%q", text)
	}
}

func TestParseDepth(t *testing.T) {
	nest := func(n int, open, close string) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	_, err := intent.Parse(nest(intent.MaxDepth, "[", "]"))
	require.NoError(t, err)
	_, err = intent.Parse(nest(intent.MaxDepth+1, "[", "]"))
	require.ErrorIs(t, err, intent.ErrMalformed)
	assert.ErrorContains(t, err, "nesting deeper than 512")

	obj := func(n int) string {
		return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
	}
	_, err = intent.Parse(obj(intent.MaxDepth))
	require.NoError(t, err)
	_, err = intent.Parse("```json\n" + obj(intent.MaxDepth+1) + "\n```")
	require.ErrorIs(t, err, intent.ErrMalformed)
	_, err = intent.Parse(`{"tool":"x","arguments":"` + strings.Repeat(`[`, 600) + `"}`)
	require.ErrorIs(t, err, intent.ErrInvalidIntent)
}

// TestParseHostileInputs: 1 MiB inputs built to make a naive scanner
// quadratic or a recursive decoder overflow its stack. Each must return an
// error or an answer quickly (a quadratic scan of 1 MiB would take hours).
func TestParseHostileInputs(t *testing.T) {
	const size = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, size/len(s)) }
	for name, text := range map[string]string{
		"open braces":        rep("{"),
		"open brackets":      rep("["),
		"balanced brackets":  rep("[") + rep("]"),
		"brace quote":        rep(`{"`),
		"brace space":        rep("{ "),
		"nested objects":     rep(`{"a":`),
		"closed objects":     rep(`{"a":1}`),
		"different objects":  `{"a":0}` + rep(`{"a":1}`),
		"backticks":          rep("`"),
		"fence lines":        rep("```\n"),
		"json fence lines":   rep("```json\n"),
		"quotes":             rep(`"`),
		"backslashes":        `{"a":"` + rep(`\`),
		"escapes":            `{"a":"` + rep(`\u0041`) + `"}`,
		"digits":             rep("9"),
		"long number":        `{"n":` + rep("9") + `}`,
		"long fraction":      `{"n":0.` + rep("0") + `1}`,
		"newlines":           rep("\n"),
		"unclosed fence":     "```json\n" + rep("{\"a\":[1,"),
		"closing braces":     rep("}"),
		"brace quote brace":  rep(`{"}`),
		"string of braces":   `{"a":"` + rep("{") + `"}`,
		"many inline values": rep(`x {"k":"v"} `),
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			o, err := intent.Parse(text)
			if err == nil {
				_, err = intent.Key(o)
				require.NoError(t, err)
			}
			// Under a second unloaded; 10 s was passed under a heavy
			// load. The bound catches a quadratic scan (hours), not a
			// slow machine.
			assert.Less(t, time.Since(start), 2*time.Minute)
		})
	}
}

func TestParseBigNumbersExact(t *testing.T) {
	a := mustParse(t, `{"n":9007199254740993}`)
	b := mustParse(t, `{"n":9007199254740992}`)
	assert.NotEqual(t, mustKey(t, a), mustKey(t, b), "2^53+1 was rounded to 2^53")
	assert.Equal(t, json.Number("9007199254740993"), a.Value.(map[string]any)["n"])
}

// TestParseValueRoundTrip: callers json.Marshal(Value) and unmarshal into
// their own types; that must give back the exact numbers.
func TestParseValueRoundTrip(t *testing.T) {
	o := mustParse(t, `{"move":[1.0,0,2e0],"id":12345678901234567890,"big":-9223372036854775808,"f":0.1,"s":"<a&b>\u00e9\n"}`)
	b, err := json.Marshal(o.Value)
	require.NoError(t, err)
	var got struct {
		Move []int  `json:"move"`
		ID   uint64 `json:"id"`
		Big  int64  `json:"big"`
		F    float64
		S    string
	}
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, []int{1, 0, 2}, got.Move)
	assert.Equal(t, uint64(12345678901234567890), got.ID)
	assert.Equal(t, int64(-9223372036854775808), got.Big)
	assert.Equal(t, 0.1, got.F)
	assert.Equal(t, "<a&b>é\n", got.S)

	// And through encoding/json's own any decoding the key is unchanged.
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	assert.Equal(t, mustKey(t, o), mustKey(t, intent.Output{Value: v}))
}

func TestParseConcurrent(t *testing.T) {
	texts := []string{`{"a":1}`, "```json\n{\"tool\":\"x\"}\n```", `x {"b":[1,2]} y`}
	want := make([]uint64, len(texts))
	for i, s := range texts {
		want[i] = mustKey(t, mustParse(t, s))
	}
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 200; i++ {
				s := texts[i%len(texts)]
				o, err := intent.Parse(s)
				if assert.NoError(t, err) {
					k, err := intent.Key(o)
					assert.NoError(t, err)
					assert.Equal(t, want[i%len(texts)], k)
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
}
