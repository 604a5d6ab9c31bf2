package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/internal/keyecho"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that refuses the key and echoes it in its error (as some do,
// in part or whole) does not put the key in maker's output: not a key
// from OPENAI_API_KEY, nor one a --model ;key=VAR names, in text or JSON
// logs, the per-sample error lines, the final error or the summary.
func TestEchoedKeysAreRedactedFromTheOutput(t *testing.T) {
	t.Parallel()
	srv := keyecho.NewServer(t)
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
			out := failedOutput(t, cmd, "a refused key fails the run")
			assert.Contains(t, out, "[REDACTED]", "the server echoed the key: %s", out)
			assert.NotContains(t, out, key)
			assert.NotContains(t, out, key[3:], "not even in part")
		})
	}
}

// maker mcp over stdio: a --model ;key=VAR's key echoed by the server in
// its 401 reaches the client redacted, in the tool's result.
func TestMCPEchoedKeyIsRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-echoed-mcp-secret-4b7e19d0"
	srv := keyecho.NewServer(t)
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

// escapedKey has characters encoding/json escapes: in JSON output it is
// written sk-a\"b\u003cc... (or sk-a\"b<c... without HTML escaping).
const escapedKey = `sk-a"b<c-echoed-5e81d2`

// jsonForms are the ways key may be written: as it is and as
// encoding/json writes it inside a string, with and without HTML escaping.
func jsonForms(t *testing.T, key string) []string {
	t.Helper()
	html, err := json.Marshal(key)
	require.NoError(t, err)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(key))
	return []string{key, string(html[1 : len(html)-1]), strings.TrimSuffix(plain.String(), "\"\n")[1:]}
}

// A key with characters JSON escapes, echoed by the server, is in no
// form in the --json summary or the JSON logs.
func TestAnEchoedKeyIsRedactedInItsJSONForms(t *testing.T) {
	t.Parallel()
	srv := keyecho.NewServer(t)
	for _, extra := range [][]string{{"--json"}, {"--log-format", "json", "--verbose"}} {
		t.Run(strings.Join(extra, " "), func(t *testing.T) {
			args := append([]string{"hanoi", "--disks", "3", "--model", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", "--base-url", srv.URL + "/v1", "--progress", "off"}, extra...)
			cmd := commandWithEnv(binary, []string{"MDAP_TEST_TEAM_KEY=" + escapedKey}, args...)
			out := failedOutput(t, cmd, "a refused key fails the run")
			assert.Contains(t, out, "[REDACTED]", "the server echoed the key: %s", out)
			for _, f := range jsonForms(t, escapedKey) {
				assert.NotContains(t, out, f)
			}
			assert.NotContains(t, out, "echoed-5e81d2", "not even in part")
		})
	}
}

// maker mcp: the escaped key reaches the client in no form, neither in the
// tool's text nor in its structured result.
func TestMCPEchoedEscapedKeyIsRedacted(t *testing.T) {
	t.Parallel()
	srv := keyecho.NewServer(t)
	cmd := commandWithEnv(binary, []string{"MDAP_TEST_TEAM_KEY=" + escapedKey},
		"mcp", "--root", t.TempDir(), "--state", t.TempDir(), "--model", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", "--base-url", srv.URL+"/v1")
	cmd.Stderr = &syncBuffer{}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "redact-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res := callTool(t, ctx, cs, "sample_and_vote", map[string]any{"messages": hanoiPrompt(3), "k": 1}, "")
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	out := string(b) + resultText(res)
	assert.Contains(t, string(b), "[REDACTED]", "the server echoed the key into the structured result: %s", b)
	for _, f := range jsonForms(t, escapedKey) {
		assert.NotContains(t, out, f)
	}
	assert.NotContains(t, out, "echoed-5e81d2", "not even in part")
}

// The spans maker exports (OTEL_EXPORTER_OTLP_ENDPOINT) carry each
// failed call's, step's and run's error as their status: a key the model
// server echoed reaches the collector redacted, as it reaches stderr.
func TestAnEchoedKeyIsRedactedInTheTraces(t *testing.T) {
	t.Parallel()
	const key = "sk-echoed-trace-secret-61c0e4"
	srv := keyecho.NewServer(t)
	var mu sync.Mutex
	var exported bytes.Buffer
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		exported.Write(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)
	cmd := commandWithEnv(binary, []string{"MDAP_TEST_TEAM_KEY=" + key, "OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"},
		"hanoi", "--disks", "3", "--model", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", "--base-url", srv.URL+"/v1", "--progress", "off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.Error(t, cmd.Run(), "a refused key fails the run")
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, exported.String(), "Bearer [REDACTED]", "the spans carry the echoed error; stderr: %s", stderr.String())
	assert.False(t, strings.Contains(exported.String(), key[3:]), "the key reached the collector")
}

// A trace collector that refuses the credentials of
// OTEL_EXPORTER_OTLP_HEADERS and echoes them in its answer: the export
// error maker reports on stderr has them redacted, as the rest of stderr.
func TestAnEchoedCollectorCredentialIsRedacted(t *testing.T) {
	t.Parallel()
	const secret = "collector-secret-2d94b7"
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "bad credentials: "+r.Header.Get("Authorization"), http.StatusBadRequest)
	}))
	t.Cleanup(collector.Close)
	cmd := commandWithEnv(binary, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL, "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer " + secret},
		"hanoi", "--disks", "2", "--progress", "off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "the run succeeds; only the export fails: %s", stderr.String())
	assert.Contains(t, stderr.String(), "bad credentials: [REDACTED]", "the export error is reported (the header's whole value is the secret)")
	assert.NotContains(t, stderr.String(), secret)
}

// The --escalate-model's ;key=VAR is a key the process holds as much as
// --model's: echoed by the server that decides contested steps, it is
// redacted in the summary and on stderr.
func TestAnEchoedEscalateModelKeyIsRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-escalate-echoed-31a9f0"
	srv := keyecho.NewServer(t)
	cmd := commandWithEnv(binary, []string{"MDAP_TEST_TEAM_KEY=" + key},
		"hanoi", "--disks", "4", "--model", "sim", "--p", "0.7", "--k", "3", "--escalate", "model", "--escalate-after", "2",
		"--escalate-model", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", "--base-url", srv.URL+"/v1", "--progress", "off", "--json")
	out := failedOutput(t, cmd, "the escalation model refuses the key")
	assert.Contains(t, out, "Incorrect API key provided: Bearer [REDACTED]", "a contested step reached the escalation model: %s", out)
	assert.NotContains(t, out, key[3:])
}

// A password in the server's URL (--base-url, a ;base=, OPENAI_BASE_URL:
// a proxy with basic authentication) is a credential: the summary's model
// name and the errors, which name the server, name it without its user
// information.
func TestABaseURLPasswordIsRedacted(t *testing.T) {
	t.Parallel()
	const password = "url-password-8c21f5"
	srv := keyecho.NewServer(t)
	u := strings.Replace(srv.URL, "http://", "http://user:"+password+"@", 1) + "/v1"
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"--base-url", []string{"OPENAI_API_KEY=sk-test-key-0000"}, []string{"--model", "openai:gpt-x", "--base-url", u}},
		{";base=", []string{"OPENAI_API_KEY=sk-test-key-0000"}, []string{"--model", "openai:gpt-x;base=" + u}},
		{"OPENAI_BASE_URL", []string{"OPENAI_API_KEY=sk-test-key-0000", "OPENAI_BASE_URL=" + u}, []string{"--model", "openai:gpt-x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := commandWithEnv(binary, c.env, append([]string{"hanoi", "--disks", "3", "--progress", "off", "--json"}, c.args...)...)
			out := failedOutput(t, cmd, "the server refuses the key")
			assert.Contains(t, out, srv.URL+"/v1", "the server's URL is named: %s", out)
			assert.NotContains(t, out, "user:", "without its user information")
			assert.NotContains(t, out, password)
		})
	}
}

// A --model spec that is refused (here its ;key= variable is unset) is
// quoted in the usage error, ;base= URL and all: the URL's password is
// redacted there too, in maker hanoi and in maker mcp, which checks its
// specs before it starts.
func TestARefusedSpecsBasePasswordIsRedacted(t *testing.T) {
	t.Parallel()
	const password = "refused-password-6d0b4e"
	spec := "openai:gpt-x;base=http://user:" + password + "@127.0.0.1:1/v1;key=MDAP_TEST_UNSET_KEY"
	for _, args := range [][]string{
		{"hanoi", "--disks", "3", "--progress", "off", "--json", "--model", spec},
		{"mcp", "--root", t.TempDir(), "--state", t.TempDir(), "--model", spec},
	} {
		t.Run(args[0], func(t *testing.T) {
			cmd := commandWithEnv(binary, []string{"MDAP_TEST_UNSET_KEY="}, args...)
			out := failedOutput(t, cmd, "the spec is refused")
			assert.Contains(t, out, "user:[REDACTED]@", "the spec is quoted: %s", out)
			assert.NotContains(t, out, password)
		})
	}
}

// failedOutput runs cmd, which must fail (why says why), and returns
// what it wrote on stdout and stderr.
func failedOutput(t *testing.T, cmd *exec.Cmd, why string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.Error(t, cmd.Run(), why)
	return stdout.String() + stderr.String()
}
