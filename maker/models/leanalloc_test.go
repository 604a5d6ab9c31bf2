package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// The lean path's allocations per call, piece by piece: each test fails
// when a piece allocates more than it does now (what the bound counts is
// said beside it).

// langchaingoInfo is the GenerationInfo langchaingo v0.1.14's OpenAI
// client builds per choice (llms/openai/openaillm.go), copied as it is.
func langchaingoInfo(u *leanUsage, reasoning string) map[string]any {
	return map[string]any{
		"CompletionTokens":                   u.CompletionTokens,
		"PromptTokens":                       u.PromptTokens,
		"TotalTokens":                        u.TotalTokens,
		"ReasoningTokens":                    u.CompletionTokensDetails.ReasoningTokens,
		"PromptAudioTokens":                  u.PromptTokensDetails.AudioTokens,
		"ThinkingContent":                    reasoning,
		"ThinkingTokens":                     u.CompletionTokensDetails.ReasoningTokens,
		"PromptCachedTokens":                 u.PromptTokensDetails.CachedTokens,
		"CompletionAudioTokens":              u.CompletionTokensDetails.AudioTokens,
		"CompletionReasoningTokens":          u.CompletionTokensDetails.ReasoningTokens,
		"CompletionAcceptedPredictionTokens": u.CompletionTokensDetails.AcceptedPredictionTokens,
		"CompletionRejectedPredictionTokens": u.CompletionTokensDetails.RejectedPredictionTokens,
	}
}

// usageOf is a reply's usage with every count set, most of them above
// 255 (Go boxes smaller ints without allocating).
func usageOf() leanUsage {
	var u leanUsage
	u.PromptTokens, u.CompletionTokens, u.TotalTokens = 521, 34, 555
	u.PromptTokensDetails.CachedTokens, u.PromptTokensDetails.AudioTokens = 512, 3
	u.CompletionTokensDetails.ReasoningTokens, u.CompletionTokensDetails.AudioTokens = 400, 5
	u.CompletionTokensDetails.AcceptedPredictionTokens, u.CompletionTokensDetails.RejectedPredictionTokens = 300, 301
	return u
}

// TestLeanResponseIsLangchaingos: every choice's GenerationInfo is
// langchaingo's for its reasoning, whatever the order of equal and
// different reasonings, and each choice's map is its own (a change to
// one is not seen in another, as with langchaingo's).
func TestLeanResponseIsLangchaingos(t *testing.T) {
	for _, reasonings := range [][]string{{""}, {"", ""}, {"a", "a"}, {"a", "b"}, {"a", "b", "a"}, {"", "", "", ""}, {"x", "x", "y", "y", "x"}} {
		r := leanReply{Usage: usageOf()}
		for i, rs := range reasonings {
			r.Choices = append(r.Choices, leanChoice{Message: leanMessage{Content: strings.Repeat("c", i), ReasoningContent: rs}, FinishReason: "stop"})
		}
		resp := leanResponse(&r)
		require.Len(t, resp.Choices, len(reasonings))
		for i, c := range resp.Choices {
			want := llms.ContentChoice{Content: strings.Repeat("c", i), ReasoningContent: reasonings[i], StopReason: "stop", GenerationInfo: langchaingoInfo(&r.Usage, reasonings[i])}
			assert.Equal(t, &want, c, "%q: choice %d", reasonings, i)
		}
		resp.Choices[0].GenerationInfo["PromptTokens"] = -1
		resp.Choices[0].GenerationInfo["extra"] = true
		for i, c := range resp.Choices[1:] {
			assert.Equal(t, langchaingoInfo(&r.Usage, reasonings[i+1]), c.GenerationInfo, "%q: choice %d after a change to the first", reasonings, i+1)
		}
	}
}

// TestLeanResponseAllocations: a reply of two choices becomes a response
// in 15 allocations: the response with its choice pointers and choices
// (1); the usage's six distinct counts above 255 (Go boxes smaller ints
// without allocating), boxed once for both maps (6); each map (a map of
// 12 entries is 4 allocations: header, directory, table, groups). With
// the counts boxed per map, as langchaingo does, it is 21 (checked by
// breaking it); one choice, 11.
func TestLeanResponseAllocations(t *testing.T) {
	r := leanReply{Usage: usageOf(), Choices: []leanChoice{
		{Message: leanMessage{Content: "move = [1, 0, 2]"}, FinishReason: "stop"},
		{Message: leanMessage{Content: "move = [2, 0, 1]"}, FinishReason: "stop"},
	}}
	allocs := testing.AllocsPerRun(100, func() { _ = leanResponse(&r) })
	assert.LessOrEqual(t, allocs, 15.0)
	r.Choices = r.Choices[:1]
	allocs = testing.AllocsPerRun(100, func() { _ = leanResponse(&r) })
	assert.LessOrEqual(t, allocs, 11.0, "one choice")
}

// TestLeanRequestIsNewRequests: the direct path's request is what
// http.NewRequestWithContext makes with the lean path's headers, body and
// GetBody included, in 4 allocations (the request, the body's reader, its
// NopCloser and GetBody) where NewRequestWithContext parses the URL and
// makes a header map each call.
func TestLeanRequestIsNewRequests(t *testing.T) {
	l := newLeanChat(http.DefaultTransport, 0, "http://127.0.0.1:1/v1/", "k", "m", false)
	require.NotNil(t, l.tmpl)
	ctx := context.WithValue(context.Background(), callKey{}, &call{})
	body := []byte(`{"model":"m","messages":[]}`)
	got, err := l.request(ctx, body)
	require.NoError(t, err)
	want, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	require.NoError(t, err)
	l.setHeaders(want.Header)
	assert.Equal(t, ctx, got.Context())
	assert.Equal(t, []any{want.Method, want.URL, want.Proto, want.ProtoMajor, want.ProtoMinor, want.Host, want.Header, want.ContentLength},
		[]any{got.Method, got.URL, got.Proto, got.ProtoMajor, got.ProtoMinor, got.Host, got.Header, got.ContentLength})
	assert.Equal(t, http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer k"}}, got.Header)
	read := func(rc io.ReadCloser) string {
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		return string(b)
	}
	// The body and every GetBody give the whole body, the body read or not.
	assert.Equal(t, string(body), read(got.Body))
	for range 2 {
		again, err := got.GetBody()
		require.NoError(t, err)
		assert.Equal(t, string(body), read(again))
	}
	// The two requests' bodies are of the same type, the one net/http
	// writes with the headers (a NopCloser of a *bytes.Reader).
	assert.IsType(t, want.Body, got.Body)

	allocs := testing.AllocsPerRun(100, func() { _, _ = l.request(ctx, body) })
	assert.LessOrEqual(t, allocs, 4.0)

	// A URL with credentials takes http.Client.Do (see do), with a
	// request of NewRequestWithContext.
	withUser := newLeanChat(http.DefaultTransport, 0, "http://u:p@127.0.0.1:1/v1", "", "m", false)
	assert.Nil(t, withUser.tmpl)
	req, err := withUser.request(ctx, body)
	require.NoError(t, err)
	assert.Equal(t, http.Header{"Content-Type": {"application/json"}}, req.Header)
	assert.Equal(t, "u", req.URL.User.Username())
}

// TestReadReplyIsLimitReaders: readReply reads what
// buf.ReadFrom(io.LimitReader(r, limit)) reads, with its errors, and
// allocates nothing when buf has room.
func TestReadReplyIsLimitReaders(t *testing.T) {
	text := strings.Repeat("0123456789", 300)
	for _, limit := range []int{0, 1, 511, 512, 513, 2999, 3000, 3001, 10000} {
		for name, r := range map[string]func() io.Reader{
			"whole":    func() io.Reader { return strings.NewReader(text) },
			"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(text)) },
			"data+EOF": func() io.Reader { return iotest.DataErrReader(strings.NewReader(text)) },
			"error": func() io.Reader {
				return io.MultiReader(strings.NewReader(text[:700]), iotest.ErrReader(errors.New("cut")))
			},
		} {
			var got, want bytes.Buffer
			gotErr := readReply(&got, r(), limit)
			_, wantErr := want.ReadFrom(io.LimitReader(r(), int64(limit)))
			assert.Equal(t, want.String(), got.String(), "%s, limit %d", name, limit)
			assert.Equal(t, wantErr, gotErr, "%s, limit %d", name, limit)
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, 8<<10))
	rd := strings.NewReader(text)
	allocs := testing.AllocsPerRun(100, func() {
		buf.Reset()
		rd.Reset(text)
		_ = readReply(buf, rd, maxReplyBody)
	})
	assert.Zero(t, allocs)
}

// TestLeanDecoderFinishReasonsCostNothing: OpenAI's finish reasons are
// read without allocating (two choices: the two contents alone), and
// any other spelling is read as encoding/json reads it.
func TestLeanDecoderFinishReasonsCostNothing(t *testing.T) {
	for _, reason := range []string{"stop", "length", "tool_calls", "content_filter", "function_call"} {
		choice := `{"index":0,"message":{"role":"assistant","content":"move = [1, 0, 2]"},"finish_reason":"` + reason + `"}`
		body := []byte(`{"choices":[` + choice + `,` + choice + `]}`)
		r, allocs := decodeAllocs(t, body)
		assert.LessOrEqual(t, allocs, 2.0, reason)
		assert.Equal(t, reason, r.Choices[1].FinishReason)
	}
	for _, reason := range []string{`"st\u006fp"`, `"stopped"`, `"sto"`, `"stop\n"`, `""`, `null`, `"stop`, `"Stop"`, `1`} {
		body := []byte(`{"choices":[{"finish_reason":` + reason + `}]}`)
		var fast, ref leanReply
		refErr := json.Unmarshal(body, &ref)
		if !decodeLeanReply(body, &fast) {
			assert.Error(t, refErr, reason)
			continue
		}
		require.NoError(t, refErr, reason)
		assert.Equal(t, ref, fast, reason)
	}
}

// TestLeanMemoAllocations: a step whose system message is the last
// step's encodes its new user message in 2 allocations: the memo (its
// slices in it) and the message's JSON, with room for a prompt's
// escaped newlines and quotes. The memo's slices apart and the JSON
// grown as it is written made 6 (each seen failing the bound).
func TestLeanMemoAllocations(t *testing.T) {
	l := newLeanChat(http.DefaultTransport, 0, "http://127.0.0.1:1/v1", "k", "m", false)
	system := llms.TextParts(llms.ChatMessageTypeSystem, strings.Repeat("Rules: \"move\" a disk.\n", 80))
	// Hanoi's user prompts: a line of text, a newline, every line or so.
	var users [2][]llms.MessageContent
	for i := range users {
		users[i] = []llms.MessageContent{system, llms.TextParts(llms.ChatMessageTypeHuman, strings.Repeat("Previous move: [1, 0, 2]\n", 60)+"state "+string(rune('a'+i)))}
	}
	step := 0
	allocs := testing.AllocsPerRun(100, func() {
		step++
		_ = l.messages(users[step%2])
	})
	assert.LessOrEqual(t, allocs, 2.0)
	// The memo is what was encoded: json.Marshal's bytes of the messages
	// (TestLeanMessagesAreMarshals checks the encoding itself).
	pm := l.messages(users[0])
	assert.Equal(t, users[0][1].Parts[0].(llms.TextContent).Text, pm.texts[1])
	assert.Equal(t, pm.size, len(pm.appendMessages(nil)))
	var decoded []map[string]string
	require.NoError(t, json.Unmarshal(pm.appendMessages(nil), &decoded))
	assert.Equal(t, []map[string]string{{"role": "system", "content": users[0][0].Parts[0].(llms.TextContent).Text}, {"role": "user", "content": users[0][1].Parts[0].(llms.TextContent).Text}}, decoded)

	// More messages than the memo has room for.
	var many []llms.MessageContent
	for i := range memoRoom + 2 {
		many = append(many, llms.TextParts(llms.ChatMessageTypeHuman, strings.Repeat("x", i)))
	}
	pm = l.messages(many)
	require.Len(t, pm.parts, memoRoom+2)
	require.NoError(t, json.Unmarshal(pm.appendMessages(nil), &decoded))
	assert.Len(t, decoded, memoRoom+2)
	assert.Equal(t, strings.Repeat("x", memoRoom+1), decoded[memoRoom+1]["content"])
}

// TestWithCallIsAValueContext: withCall's context carries its call and
// every value, deadline and cancellation of its parent; a context
// derived from it is cancelled with the parent without a goroutine of
// its own (as from context.WithValue's); and it is one allocation, the
// call with the context.
func TestWithCallIsAValueContext(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), key{}, "v"))
	ctx, c := withCall(parent)
	assert.Same(t, c, ctx.Value(callKey{}).(*call))
	assert.Equal(t, "v", ctx.Value(key{}))
	_, hasDeadline := ctx.Deadline()
	assert.False(t, hasDeadline)

	before := runtime.NumGoroutine()
	var children []context.Context
	for range 50 {
		child, stop := context.WithCancel(ctx)
		defer stop()
		children = append(children, child)
	}
	assert.Less(t, runtime.NumGoroutine()-before, 10, "a goroutine per derived context")
	cause := errors.New("stop")
	cancel(cause)
	for _, child := range children {
		<-child.Done()
		assert.Equal(t, cause, context.Cause(child))
	}
	assert.Equal(t, context.Canceled, ctx.Err())

	allocs := testing.AllocsPerRun(100, func() { _, _ = withCall(parent) })
	assert.LessOrEqual(t, allocs, 1.0)
}
