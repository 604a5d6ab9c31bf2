package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"auth-test","version":"1"}}}`

// startMCPHTTP runs `maker mcp --http 127.0.0.1:0` with args and without
// $MDAP_MCP_TOKEN, and returns its endpoint and its stderr so far.
func startMCPHTTP(t *testing.T, args ...string) (string, *syncBuffer, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp", "--http", "127.0.0.1:0", "--state", t.TempDir()}, args...)...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, tokenEnv+"=") })
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, stderr.String())
	endpoint := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(line)
	require.NotEmpty(t, endpoint, line)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return endpoint, stderr, cmd
}

// mcpPost posts body to endpoint with the bearer token (none when empty)
// and returns the status.
func mcpPost(t *testing.T, endpoint, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestBinaryMCPHTTPNeedsATokenByDefault: `maker mcp --http` without
// --token or $MDAP_MCP_TOKEN, even on loopback, generates a token, prints
// it once on stderr, and answers a request without it 401 and one with it
// 200; its log says how it authenticates, never "token=[REDACTED]".
func TestBinaryMCPHTTPNeedsATokenByDefault(t *testing.T) {
	t.Parallel()
	endpoint, stderr, _ := startMCPHTTP(t)
	var token string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`Authorization: Bearer ([0-9a-f]{64})\n`).FindStringSubmatch(stderr.String())
		if m != nil {
			token = m[1]
		}
		return m != nil && strings.Contains(stderr.String(), "serving MCP over streamable HTTP")
	}, 30*time.Second, 10*time.Millisecond, "the generated token is printed: %s", stderr)

	assert.Equal(t, http.StatusUnauthorized, mcpPost(t, endpoint, "", mcpInitialize))
	assert.Equal(t, http.StatusUnauthorized, mcpPost(t, endpoint, "not-"+token, mcpInitialize))
	assert.Equal(t, http.StatusOK, mcpPost(t, endpoint, token, mcpInitialize))
	out := stderr.String()
	assert.Equal(t, 1, strings.Count(out, token), "the token is printed once: %s", out)
	assert.Contains(t, out, `auth="bearer token (generated)"`)
	assert.NotContains(t, out, "token=[REDACTED]")
}

// TestBinaryMCPHTTPNoAuth: --no-auth serves without a token, says so in a
// warning, and logs no token at all.
func TestBinaryMCPHTTPNoAuth(t *testing.T) {
	t.Parallel()
	endpoint, stderr, _ := startMCPHTTP(t, "--no-auth")
	assert.Equal(t, http.StatusOK, mcpPost(t, endpoint, "", mcpInitialize))
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "serving MCP over streamable HTTP") }, 30*time.Second, 10*time.Millisecond)
	out := stderr.String()
	assert.Contains(t, out, "serving without a token: every user and process of this machine can use this server")
	assert.Contains(t, out, "auth=none")
	assert.NotContains(t, out, "Authorization: Bearer")
	assert.NotContains(t, out, "token=[REDACTED]")
}

// TestBinaryMCPStdioOverlongLine: `maker mcp` over stdio answers a line
// over --max-request-bytes (1 MiB against 1024) with a JSON-RPC error and
// answers the next request; the process keeps serving until stdin closes.
func TestBinaryMCPStdioOverlongLine(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "mcp", "--max-request-bytes", "1024", "--state", t.TempDir(), "--log-level", "warn")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	replies := bufio.NewReader(stdout)
	next := func() string {
		line, err := replies.ReadString('\n')
		require.NoError(t, err, stderr.String())
		return line
	}
	send := func(s string) {
		_, err := io.WriteString(stdin, s+"\n")
		require.NoError(t, err)
	}
	send(mcpInitialize)
	assert.Contains(t, next(), `"result"`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`)
	assert.Contains(t, next(), `"code":-32600`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	assert.Regexp(t, `"id":3,"result"`, next())
	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait(), stderr.String())
}
