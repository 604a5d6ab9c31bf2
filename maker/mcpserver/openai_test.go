package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/keyecho"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeOpenAI is an OpenAI-compatible chat completions server on loopback.
// Call i answers with a native tool call, except every third call, which
// writes the same call as JSON text. It records what it was sent.
type fakeOpenAI struct {
	*httptest.Server
	mu    sync.Mutex
	auth  []string
	tools int
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{}
	n := 0
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Tools []json.RawMessage `json:"tools"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.tools = len(req.Tools)
		i := n
		n++
		f.mu.Unlock()
		msg := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": "read_file", "arguments": `{"path": "a.go"}`},
		}}}
		finish := "tool_calls"
		if i%3 == 2 {
			msg = map[string]any{"role": "assistant", "content": `{"tool_intent": {"tool": "read_file", "args": {"path": "a.go"}}}`}
			finish = "stop"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(f.Close)
	return f
}

var readFileTool = []any{map[string]any{"type": "function", "function": map[string]any{
	"name": "read_file", "description": "read a file",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
}}}

func TestSampleAndVoteThroughAnOpenAICompatibleServer(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t)
	c, _ := connect(t, mcpserver.Config{Models: []string{"openai:fake"}, BaseURL: fake.URL})
	out := decode[mcpserver.SampleAndVoteOutput](t, call(t, context.Background(), c.ClientSession, "sample_and_vote", map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "Which file holds the version?"}},
		"tools":    readFileTool,
		"k":        3, "parallel": 1,
	}, nil))
	require.True(t, out.Decided, out.Message)
	assert.Equal(t, 2, out.Winner.DecidedAt, "native calls and the same call in text vote together")
	require.NotNil(t, out.Winner.Output.Intent)
	assert.Equal(t, "read_file", out.Winner.Output.Intent.Tool)
	assert.Equal(t, 30, out.Usage.InputTokens, "the provider's usage")
	assert.Equal(t, 15, out.Usage.OutputTokens)
	assert.Equal(t, "openai:fake@"+fake.URL, out.Model)
	fake.mu.Lock()
	defer fake.mu.Unlock()
	assert.Equal(t, 1, fake.tools, "the declared tool reached the model")
}

func TestARequestsOwnBaseURLNeverGetsTheEnvironmentsKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-operator-secret")
	fake := newFakeOpenAI(t)
	c, _ := connect(t, mcpserver.Config{Models: []string{"openai:fake"}, BaseURL: "http://127.0.0.1:1/v1", AllowAnyModel: true})
	out := decode[mcpserver.SampleAndVoteOutput](t, call(t, context.Background(), c.ClientSession, "sample_and_vote", map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "Which file?"}},
		"models":   []string{"openai:other"}, "base_url": fake.URL, "k": 1,
	}, nil))
	require.True(t, out.Decided, out.Message)
	fake.mu.Lock()
	defer fake.mu.Unlock()
	require.NotEmpty(t, fake.auth)
	for _, a := range fake.auth {
		assert.NotContains(t, a, "sk-operator-secret")
	}
}

// A client's model spec cannot carry its own endpoint: with
// ;base=URL it would get the operator's key sent to its server, and with
// ;key=VAR any variable of the server's environment.
func TestARequestsModelSpecCarriesNoEndpoint(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-operator-secret")
	t.Setenv("MDAP_TEST_OTHER_SECRET", "sk-other-secret")
	fake := newFakeOpenAI(t)
	c, _ := connect(t, mcpserver.Config{Models: []string{"openai:fake"}, BaseURL: "http://127.0.0.1:1/v1", AllowAnyModel: true})
	msgs := []any{map[string]any{"role": "user", "content": "Which file?"}}
	for _, spec := range []string{
		"openai:other;base=" + fake.URL,
		"openai:other;key=MDAP_TEST_OTHER_SECRET",
		"openai:other;base=" + fake.URL + ";key=MDAP_TEST_OTHER_SECRET",
		"openai:other;rpm=60",
	} {
		res := call(t, context.Background(), c.ClientSession, "sample_and_vote", map[string]any{"messages": msgs, "models": []string{spec}, "k": 1}, nil)
		toolError(t, res, "are the operator's settings")
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	assert.Empty(t, fake.auth, "no request reached the client's server")
}

// A model server that refuses the key and echoes it in its error does
// not put the key in the tool's result: not the environment's, not one a
// Models spec's ;key=VAR names; in the text, the structured output and
// a sample's error alike.
func TestAnEchoedKeyNeverReachesTheClient(t *testing.T) {
	echo := keyecho.NewServer(t)
	for _, c := range []struct{ env, model string }{
		{"OPENAI_API_KEY", "openai:fake"},
		{"MDAP_TEST_TEAM_KEY", "openai:fake;key=MDAP_TEST_TEAM_KEY"},
	} {
		const key = "sk-echoed-by-the-model-server-71c2"
		t.Setenv(c.env, key)
		cl, _ := connect(t, mcpserver.Config{Models: []string{c.model}, BaseURL: echo.URL})
		res := call(t, context.Background(), cl.ClientSession, "sample_and_vote", map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": "Which file?"}}, "k": 1,
		}, nil)
		b, err := json.Marshal(res)
		require.NoError(t, err)
		assert.Contains(t, string(b), "[REDACTED]", "%s: the server echoed the key: %s", c.model, b)
		assert.NotContains(t, string(b), key, c.model)
	}
}

// A key with characters JSON escapes, echoed by the model server, reaches
// the client in no form: not in the structured result (where it would be
// written sk-a\"b\u003cc...), its text, or a progress notification.
func TestAnEchoedEscapedKeyNeverReachesTheClient(t *testing.T) {
	const key = `sk-a"b<c&d\e-echoed-0b9d`
	t.Setenv("MDAP_TEST_TEAM_KEY", key)
	cl, _ := connect(t, mcpserver.Config{Models: []string{"openai:fake;key=MDAP_TEST_TEAM_KEY"}, BaseURL: keyecho.NewServer(t).URL})
	res := call(t, context.Background(), cl.ClientSession, "sample_and_vote", map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "Which file?"}}, "k": 1,
	}, 7)
	out := structured[mcpserver.SampleAndVoteOutput](t, res)
	require.NotEmpty(t, out.Samples)
	assert.Contains(t, out.Samples[0].Error, "Incorrect API key provided: Bearer [REDACTED]", "the structured result, decoded")
	assert.Contains(t, text(res), "[REDACTED]")
	require.Eventually(t, func() bool { return len(cl.notes(7)) > 0 }, 5*time.Second, time.Millisecond, "a progress notification")
	b, err := json.Marshal(res)
	require.NoError(t, err)
	wire := string(b) + text(res)
	for _, n := range cl.notes(7) {
		wire += n.Message
	}
	assert.Contains(t, cl.notes(7)[0].Message, "[REDACTED]", "the server echoed the key: %s", cl.notes(7)[0].Message)
	assert.NotContains(t, wire, "echoed-0b9d", "no form of the key, not even in part")
}
