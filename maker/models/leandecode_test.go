package models

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeSeeds are chat completions the fast decoder must take, then
// near misses it must leave to encoding/json.
var decodeSeeds = []string{
	leanCompletion,
	leanCompletion3,
	`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m","system_fingerprint":null,"choices":[{"index":0,"message":{"role":"assistant","content":"move = [1, 0, 2]\nnext_state = [[3], [], [2, 1]]","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":512,"completion_tokens":31,"total_tokens":543,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}} trailing`,
	` {"choices":[{"message":{"content":"\u003c\u00e9\ud83d\ude00\ud83d x\"\\\/\b\f\n\r\t caf` + "\xc3\xa9 \xff" + `"},"finish_reason":null}],"usage":null}`,
	`{"choices":[null,{"message":null},{"message":{"function_call":{"name":"f","arguments":"{}"},"tool_calls":null}}],"extra":[1,-2.5e+3,true,false,null,{"a":[]}]}`,
	`{"choices":[{"message":{"function_call":null,"tool_calls":[null,{"function":null}]}}]}`,
	`{"choices":[],"usage":{"prompt_tokens":-0}}`,
	`{"choices":null}`,
	`{}`,
	// left to encoding/json
	`{"Choices":[]}`,
	`{"choices":[],"choices":[]}`,
	`{"usage":{"prompt_tokens":1.0}}`,
	`{"usage":{"prompt_tokens":1e2}}`,
	`{"usage":{"prompt_tokens":99999999999999999999}}`,
	`{"usage":{"prompt_tokens":01}}`,
	`{"choices":[{"message":{"content":["a"]}}]}`,
	`{"choices":[{"message":{"content":"a\qb"}}]}`,
	`{"choices":[{"message":{"content":"a` + "\x01" + `"}}]}`,
	`{"choices":[{"mess\u0061ge":{}}]}`,
	`{"choices":[1]}`,
	`{"choices":[],}`,
	`{"x":[1,]}`,
	`{"x":tru}`,
	`{"x":-}`,
	`{"x":1.}`,
	`[]`,
	``,
	`{"choices":[{"message":{"content":"unterminated`,
}

// TestLeanDecoderTakesProviderReplies: the replies providers send take
// the fast decoder, with encoding/json's result; the near misses do not.
func TestLeanDecoderTakesProviderReplies(t *testing.T) {
	taken := map[string]bool{}
	for _, s := range decodeSeeds[:9] {
		taken[s] = true
	}
	for _, s := range decodeSeeds {
		var fast leanReply
		ok := decodeLeanReply([]byte(s), &fast)
		assert.Equal(t, taken[s], ok, "%q", s)
		if ok {
			var ref leanReply
			require.NoError(t, json.NewDecoder(bytes.NewReader([]byte(s))).Decode(&ref))
			assert.Equal(t, ref, fast, "%q", s)
		}
	}
	var r leanReply
	require.True(t, decodeLeanReply([]byte(decodeSeeds[3]), &r))
	assert.Equal(t, "<é😀\ufffd x\"\\/\b\f\n\r\t café \ufffd", r.Choices[0].Message.Content)
}

// FuzzLeanDecoder: whenever the fast decoder takes a body, encoding/json
// decodes it without error into the same reply.
func FuzzLeanDecoder(f *testing.F) {
	for _, s := range append(decodeSeeds, replySeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast leanReply
		if !decodeLeanReply(b, &fast) {
			return
		}
		var ref leanReply
		require.NoError(t, json.NewDecoder(bytes.NewReader(b)).Decode(&ref), "%q", b)
		require.Equal(t, ref, fast, "%q", b)

		// Into a reply whose choices have room (as generate gives it),
		// as encoding/json decodes into the same: the room reused, an
		// absent "choices" leaving it empty, null making it nil.
		var roomy, roomyRef leanReply
		roomy.Choices, roomyRef.Choices = make([]leanChoice, 0, 2), make([]leanChoice, 0, 2)
		require.True(t, decodeLeanReply(b, &roomy), "%q", b)
		require.NoError(t, json.NewDecoder(bytes.NewReader(b)).Decode(&roomyRef), "%q", b)
		require.Equal(t, roomyRef, roomy, "%q", b)
	})
}

// exact returns s in a slice with no capacity beyond its length, so a
// read past the input panics.
func exact(s string) []byte {
	b := make([]byte, len(s))
	copy(b, s)
	return b
}

// TestLeanDecoderBounds: the fast decoder never reads past its input
// (every proper prefix of a reply is left to encoding/json, without a
// panic), follows nesting to maxFastDepth and no deeper (counted per
// level, not per sibling), and reads counts with every digit.
func TestLeanDecoderBounds(t *testing.T) {
	full := `{"choices":[{"message":{"content":"a\nb","tool_calls":[{"id":"1","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop","logprobs":null,"flag":true,"x":{}}],"usage":{"prompt_tokens":1999,"completion_tokens":-0}}`
	var r leanReply
	require.True(t, decodeLeanReply(exact(full), &r))
	assert.Equal(t, 1999, r.Usage.PromptTokens)
	assert.Equal(t, "a\nb", r.Choices[0].Message.Content)
	for n := range len(full) {
		var r leanReply
		assert.False(t, decodeLeanReply(exact(full[:n]), &r), "%q", full[:n])
	}

	// The reply object is one level; n nested values below it make n+1.
	arrays := func(n int) string { return `{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}` }
	objects := func(n int) string {
		return `{"x":` + strings.Repeat(`{"a":`, n-1) + `{}` + strings.Repeat("}", n-1) + `}`
	}
	for name, nest := range map[string]func(int) string{"arrays": arrays, "objects": objects} {
		var ref any
		require.NoError(t, json.Unmarshal([]byte(nest(maxFastDepth)), &ref), "a valid text")
		assert.True(t, decodeLeanReply(exact(nest(maxFastDepth-1)), &r), "%s to depth %d", name, maxFastDepth)
		assert.False(t, decodeLeanReply(exact(nest(maxFastDepth)), &r), "%s to depth %d", name, maxFastDepth+1)
	}
	for _, v := range []string{"[]", "{}"} {
		siblings := `{"x":[` + strings.TrimSuffix(strings.Repeat(v+",", 2*maxFastDepth), ",") + `]}`
		assert.True(t, decodeLeanReply(exact(siblings), &r), "siblings %s", v)
	}
}

// TestLeanDecoderAllocatesOnlyItsStrings: the keys it reads cost no
// allocation, nor do choices that fit the room given; each string kept
// costs one, escapes or not.
func TestLeanDecoderAllocatesOnlyItsStrings(t *testing.T) {
	for _, content := range []string{
		`move = [1, 0, 2]`,
		`move = [1, 0, 2]\nnext_state = [[3], [], [2, 1]] \u00e9`,
		// two invalid bytes, each U+FFFD (three bytes): within the slack
		"move \\n = \xff [1, 0, 2] \xfe",
	} {
		choice := `{"index":0,"message":{"role":"assistant","content":"` + content + `","refusal":null},"finish_reason":"stop","logprobs":null}`
		body := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[` + choice + `,` + choice + `],` +
			`"usage":{"prompt_tokens":521,"completion_tokens":34,"total_tokens":555,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},"system_fingerprint":"fp"}`)
		r, allocs := decodeAllocs(t, body)
		// Two contents and two finish reasons.
		assert.LessOrEqual(t, allocs, 4.0, "%s", content)
		require.Len(t, r.Choices, 2)
		assert.Equal(t, 555, r.Usage.TotalTokens)
	}
}

// decodeAllocs decodes body into room for two choices, as the lean path
// does, and returns the reply and the allocations a decode makes.
func decodeAllocs(t *testing.T, body []byte) (leanReply, float64) {
	t.Helper()
	var r leanReply
	room := make([]leanChoice, 0, 2)
	allocs := testing.AllocsPerRun(50, func() {
		r = leanReply{Choices: room[:0]}
		if !decodeLeanReply(body, &r) {
			t.Fatal("not decoded")
		}
	})
	return r, allocs
}

// TestLeanDecoderSurrogatesAtTheEnd: a surrogate pair that ends the
// string decodes to its character; a high surrogate that ends it, or whose
// low half is cut short, to U+FFFD, as encoding/json decodes them.
func TestLeanDecoderSurrogatesAtTheEnd(t *testing.T) {
	for _, content := range []string{`a\ud83d\ude00`, `a\ud83d`, `a\ud83d\n`, `\ud83d\ude00\ud83d\ude00`, `a\ud83d\u00e9`} {
		body := []byte(`{"choices":[{"message":{"content":"` + content + `"}}]}`)
		var fast, ref leanReply
		require.True(t, decodeLeanReply(body, &fast), "%s", content)
		require.NoError(t, json.Unmarshal(body, &ref), "%s", content)
		assert.Equal(t, ref, fast, "%s", content)
	}
}
