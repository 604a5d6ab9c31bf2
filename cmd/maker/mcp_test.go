package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// progressLog records the progress notifications a client receives.
type progressLog struct {
	mu    sync.Mutex
	notes map[string]int
}

func (p *progressLog) options() *mcp.ClientOptions {
	p.notes = map[string]int{}
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.notes[fmt.Sprint(r.Params.ProgressToken)]++
	}}
}

func (p *progressLog) count(tok string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notes[tok]
}

func callTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args any, tok string) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if tok != "" {
		p.SetProgressToken(tok)
	}
	res, err := cs.CallTool(ctx, p)
	require.NoError(t, err, name)
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ok returns the structured output of a successful call.
func ok(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	require.False(t, res.IsError, resultText(res))
	m, isMap := res.StructuredContent.(map[string]any)
	require.True(t, isMap, "%T", res.StructuredContent)
	return m
}

// countSpec counts from 0 to n, with its script for the simulated model.
func countSpec(n int) []byte {
	script := make([]any, n)
	for i := range n {
		script[i] = map[string]any{"state": i + 1, "done": i+1 == n}
	}
	b, _ := json.Marshal(map[string]any{
		"name": "count", "system": "Add one to the state.", "initial_state": 0, "max_steps": n, "script": script,
		"answer": map[string]any{"type": "object", "required": []string{"state", "done"},
			"properties": map[string]any{"state": map[string]any{"type": "integer"}, "done": map[string]any{"type": "boolean"}}},
	})
	return b
}

func hanoiPrompt(n int) []map[string]any {
	var out []map[string]any
	for _, m := range hanoi.Messages(n, hanoi.Start(n), nil) {
		role := "user"
		if m.Role == llms.ChatMessageTypeSystem {
			role = "system"
		}
		out = append(out, map[string]any{"role": role, "content": m.Parts[0].(llms.TextContent).Text})
	}
	return out
}

// TestBinaryMCPStdio runs `maker mcp` as a child process and calls every
// tool over its stdin and stdout with the SDK's own client: a run_task
// cancelled mid-run and resumed from its journal, and bad arguments that
// come back as tool errors while the server keeps serving.
func TestBinaryMCPStdio(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	// Long enough that a cancellation sent after its fifth step lands
	// mid-run on a loaded machine (40 steps at 3 ms once finished first).
	const steps = 200
	require.NoError(t, os.WriteFile(filepath.Join(root, "count.json"), countSpec(steps), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(root), "outside.json"), countSpec(2), 0o644))
	cmd := exec.Command(binary, "mcp", "--root", root, "--state", state, "--latency", "5ms", "--log-level", "warn")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	var prog progressLog
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "binary-test"}, prog.options()).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, tools.Tools, 6)

	v := ok(t, callTool(t, ctx, cs, "vote", map[string]any{"k": 2, "candidates": []any{
		map[string]any{"text": `{"a": 1}`}, map[string]any{"text": `{"a":1.0}`},
	}}, ""))
	assert.Equal(t, true, v["decided"])
	p := ok(t, callTool(t, ctx, cs, "parse", map[string]any{"reply": map[string]any{"text": "no answer"}}, ""))
	assert.Equal(t, "unparseable", p["flag"])
	k := ok(t, callTool(t, ctx, cs, "kmin", map[string]any{"steps": 1048575, "p": 0.6429}, ""))
	assert.EqualValues(t, 29, k["k_min"])
	sv := ok(t, callTool(t, ctx, cs, "sample_and_vote", map[string]any{"messages": hanoiPrompt(3)}, "sv"))
	assert.Equal(t, true, sv["decided"])

	// A run cancelled mid-run, then resumed from its journal.
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"spec_path": "count.json", "journal": "count.jsonl"}}
		params.SetProgressToken("run")
		_, err := cs.CallTool(runCtx, params)
		done <- err
	}()
	require.Eventually(t, func() bool { return prog.count("run") >= 5 }, 20*time.Second, 2*time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	run := ok(t, callTool(t, ctx, cs, "run_task", map[string]any{"spec_path": "count.json", "journal": "count.jsonl", "resume": true}, ""))
	assert.Equal(t, true, run["done"], run["message"])
	assert.EqualValues(t, steps, run["steps"])
	assert.EqualValues(t, steps, run["final_state"])
	assert.GreaterOrEqual(t, run["resumed"], 5.0)
	assert.Less(t, run["resumed"], float64(steps))
	assert.FileExists(t, filepath.Join(state, "count.jsonl"))

	// Bad arguments: tool errors, and the server keeps serving.
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"run_task", map[string]any{"spec_path": 7}, "spec_path"},
		{"run_task", map[string]any{"spec_path": "missing.json"}, "no such file under the server's root"},
		{"run_task", map[string]any{"spec_path": "../outside.json"}, "path outside the root"},
		{"sample_and_vote", map[string]any{"messages": hanoiPrompt(3), "models": []string{"openai:gpt-4.1"}}, "not one of this server's models"},
		{"vote", map[string]any{"candidates": []any{}, "k": -1}, "/properties/k: minimum"}, // the schema sets k >= 1
	} {
		res := callTool(t, ctx, cs, tc.tool, tc.args, "")
		assert.True(t, res.IsError, "%s %v", tc.tool, tc.args)
		assert.Contains(t, resultText(res), tc.want)
	}
	ok(t, callTool(t, ctx, cs, "kmin", map[string]any{"steps": 10, "p": 0.9}, ""))

	// The client closes stdin: the server ends with status 0.
	require.NoError(t, cs.Close())
	require.NotNil(t, cmd.ProcessState)
	assert.Equal(t, 0, cmd.ProcessState.ExitCode(), stderr.String())
	assert.NotContains(t, stderr.String(), "panic")
}

// TestBinaryMCPHTTP serves streamable HTTP on 127.0.0.1:0 with a bearer
// token from the environment, prints the address it got, refuses a
// request without the token, and exits 130 on SIGTERM.
func TestBinaryMCPHTTP(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "mcp", "--http", "127.0.0.1:0", "--state", t.TempDir(), "--log-level", "warn")
	cmd.Env = append(os.Environ(), "MDAP_MCP_TOKEN=tok-123")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, stderr.String())
	m := regexp.MustCompile(`http://127\.0\.0\.1:(\d+)/mcp`).FindString(line)
	require.NotEmpty(t, m, "the actual address is printed: %q", line)
	assert.NotContains(t, m, ":0/", "the port the system picked, not :0")

	resp, err := http.Post(m, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	ctx := context.Background()
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer tok-123")
		return http.DefaultTransport.RoundTrip(r)
	})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "binary-test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m, HTTPClient: hc, MaxRetries: -1}, nil)
	require.NoError(t, err)
	k := ok(t, callTool(t, ctx, cs, "kmin", map[string]any{"steps": 1048575, "p": 0.9978}, ""))
	assert.EqualValues(t, 3, k["k_min"])
	require.NoError(t, cs.Close())

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 130, ee.ExitCode(), stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("maker mcp --http did not end on SIGTERM")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestMCPNoAuthWithTheEnvironmentsToken: --no-auth refuses a token that
// $MDAP_MCP_TOKEN gives, and says that it came from there.
func TestMCPNoAuthWithTheEnvironmentsToken(t *testing.T) {
	t.Setenv(tokenEnv, "tok")
	code, _, stderr := cli(t, "mcp", "--http", "127.0.0.1:0", "--no-auth")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "maker: --no-auth plus --token (here $MDAP_MCP_TOKEN): contradict each other")
}

func TestMCPBadFlagsExit2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, "--http: bad listen address"},
		{[]string{"--http", "nonsense"}, "--http"},
		{[]string{"--token", "x"}, "maker: --token: applies to --http only"},
		{[]string{"--allow-remote"}, "--allow-remote: applies to --http only"},
		{[]string{"--no-auth"}, "--no-auth: applies to --http only"},
		{[]string{"--http", "127.0.0.1:0", "--no-auth", "--token", "x"}, "maker: --no-auth plus --token: contradict each other"},
		{[]string{"--model", "gpt"}, `--model "gpt"`},
		{[]string{"--base-url", "ftp://x"}, "--base-url"},
		{[]string{"--tools", "everything"}, "--tools"},
		{[]string{"--root", "/no/such/folder"}, "--root"},
		{[]string{"--max-k", "0"}, "--max-k 0"},
		{[]string{"--max-samples", "2", "--max-k", "3"}, "--max-samples 2"},
		{[]string{"--p", "0"}, "--p 0"},
		{[]string{"--timeout", "0s"}, "--timeout"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--state", ""}, "--state"},
		{[]string{"--colour"}, "unknown flag: --colour"},
	} {
		code, stdout, stderr := cli(t, append([]string{"mcp"}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, stdout, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
}

// TestBinaryMCPLeavesNoFolderBehind: `maker mcp` started and ended without
// a run_task makes nothing under the home folder (it used to make
// ~/.local/state/mdap/journals at every start).
func TestBinaryMCPLeavesNoFolderBehind(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cmd := exec.Command(binary, "mcp", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=", "MDAP_STATE_DIR=")
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"id":1`, "initialize is answered")
	entries, err := os.ReadDir(home)
	require.NoError(t, err)
	assert.Empty(t, entries, "the home folder is left as it was")
}
