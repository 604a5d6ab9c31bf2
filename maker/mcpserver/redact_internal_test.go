package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/internal/secrets"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldKeys finds the environment's keys and each spec's ;key=VAR value,
// leaves out keys under 4 bytes, and puts a key that holds another first,
// so that it is replaced whole.
func TestHeldKeys(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "abcd")
	t.Setenv("ANTHROPIC_API_KEY", "xyz")
	t.Setenv("MDAP_TEST_TEAM_KEY", "abcd-and-more")
	keys := heldKeys("", []string{"sim", "openai:m;key=MDAP_TEST_TEAM_KEY", "openai:m;key=MDAP_TEST_UNSET_KEY"})
	var got []string
	for _, k := range keys {
		got = append(got, string(k))
	}
	assert.Equal(t, []string{"abcd-and-more", "abcd"}, got, "4 bytes kept, 3 left out, the longer first")
	b, found := redact(keys, []byte("a abcd-and-more b abcd c xyz"))
	assert.True(t, found)
	assert.Equal(t, "a [REDACTED] b [REDACTED] c xyz", string(b))
	_, found = redact(keys, []byte("nothing held"))
	assert.False(t, found)
}

// A result's structured content of any type, its text and a protocol
// error's message and data lose every form of a key; what holds none is
// left as it was.
func TestRedactResultAndError(t *testing.T) {
	t.Parallel()
	const key = `sk-a"b<c-0123`
	keys := secrets.New(key)
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: `{"e":"sk-a\"b\u003cc-0123"} and sk-a"b<c-0123`}},
		StructuredContent: map[string]any{"error": "refused " + key, "n": 3},
	}
	redactResult(keys, res)
	assert.Equal(t, `{"e":"[REDACTED]"} and [REDACTED]`, res.Content[0].(*mcp.TextContent).Text)
	assert.JSONEq(t, `{"error":"refused [REDACTED]","n":3}`, string(res.StructuredContent.(json.RawMessage)))
	raw := json.RawMessage(`{"error":"refused sk-a\"b<c-0123"}`)
	res = &mcp.CallToolResult{StructuredContent: raw}
	redactResult(keys, res)
	assert.JSONEq(t, `{"error":"refused [REDACTED]"}`, string(res.StructuredContent.(json.RawMessage)))
	clean := map[string]any{"n": 3}
	res = &mcp.CallToolResult{StructuredContent: clean}
	redactResult(keys, res)
	assert.Equal(t, clean, res.StructuredContent, "no key: the value itself")

	err := redactError(keys, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "refused " + key, Data: json.RawMessage(`["sk-a\"b\u003cc-0123"]`)})
	var we *jsonrpc.Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "refused [REDACTED]", Data: json.RawMessage(`["[REDACTED]"]`)}, *we)
	assert.EqualError(t, redactError(keys, fmt.Errorf("validating tool output: %q", key)), `validating tool output: "[REDACTED]"`)
	plain := errors.New("no key here")
	assert.Same(t, plain, redactError(keys, plain))
	assert.NoError(t, redactError(keys, nil))
}

// The held keys are the environment's OpenAI and Anthropic keys and each
// spec's ;key=VAR value, and no other variable's.
func TestHeldKeysAreTheModelsKeys(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "openai-key-1")
	t.Setenv("ANTHROPIC_API_KEY", "anthropic-key-2")
	t.Setenv("MDAP_TEST_TEAM_KEY", "team-key-3")
	t.Setenv("MDAP_TEST_OTHER_KEY", "other-key-4")
	var got []string
	for _, k := range heldKeys("", []string{"openai:m;key=MDAP_TEST_TEAM_KEY", "anthropic:m"}) {
		got = append(got, string(k))
	}
	assert.ElementsMatch(t, []string{"openai-key-1", "anthropic-key-2", "team-key-3"}, got)
}

// A password in a server URL is held like a key: Config.BaseURL's, a
// spec's ;base=, the environment's; a URL without one adds nothing.
func TestHeldKeysHoldServerURLPasswords(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "http://u:env-pass-7@127.0.0.1:1/v1")
	t.Setenv("OPENAI_API_BASE", "")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:2")
	t.Setenv("OLLAMA_HOST", "")
	var got []string
	for _, k := range heldKeys("http://proxy:base-pass-5@127.0.0.1:3/v1", []string{"openai:m;base=http://u:spec-pass-6@127.0.0.1:4/v1", "openai:n;base=http://127.0.0.1:5/v1"}) {
		got = append(got, string(k))
	}
	assert.ElementsMatch(t, []string{"base-pass-5", "spec-pass-6", "env-pass-7"}, got)
}
