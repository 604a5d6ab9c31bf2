package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyEchoServer is an OpenAI-compatible server that refuses every key
// and echoes it in its error, as some servers do.
func keyEchoServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A server that refuses the key and echoes it in its error (as some do,
// in part or whole) does not put the key in maker's output: not a key
// from OPENAI_API_KEY, nor one a --model ;key=VAR names, in text or JSON
// logs, the per-sample error lines, the final error or the summary.
func TestEchoedKeysAreRedactedFromTheOutput(t *testing.T) {
	srv := keyEchoServer(t)
	for _, c := range []struct {
		name, env, model string
		extra            []string
	}{
		{"environment", "OPENAI_API_KEY", "openai:gpt-x", []string{"--log-format", "json"}},
		{"key= variable", "MDAP_TEST_TEAM_KEY", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", []string{"--log-format", "json"}},
		{"key= variable, text", "MDAP_TEST_TEAM_KEY", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", []string{"--json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const key = "sk-echoed-secret-9f3c2a71"
			args := append([]string{"hanoi", "--disks", "3", "--model", c.model, "--base-url", srv.URL + "/v1", "--verbose", "--progress", "off"}, c.extra...)
			cmd := commandWithEnv(binary, []string{c.env + "=" + key}, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			require.Error(t, err, "a refused key fails the run")
			out := stdout.String() + stderr.String()
			assert.Contains(t, out, "[REDACTED]", "the server echoed the key: %s", out)
			assert.NotContains(t, out, key)
			assert.NotContains(t, out, key[3:], "not even in part")
		})
	}
}

// maker mcp over stdio: a --model ;key=VAR's key echoed by the server in
// its 401 reaches the client redacted, in the tool's result.
func TestMCPEchoedKeyIsRedacted(t *testing.T) {
	const key = "sk-echoed-mcp-secret-4b7e19d0"
	srv := keyEchoServer(t)
	cmd := commandWithEnv(binary, []string{"MDAP_TEST_TEAM_KEY=" + key},
		"mcp", "--root", t.TempDir(), "--state", t.TempDir(), "--model", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", "--base-url", srv.URL+"/v1", "--log-level", "debug")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "redact-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res := callTool(t, ctx, cs, "sample_and_vote", map[string]any{"messages": hanoiPrompt(3), "k": 1}, "")
	b, err := json.Marshal(res)
	require.NoError(t, err)
	out := string(b)
	assert.Contains(t, out, "[REDACTED]", "the server echoed the key: %s", out)
	assert.NotContains(t, out, key)
	require.NoError(t, cs.Close())
	assert.NotContains(t, stderr.String(), key)
}
