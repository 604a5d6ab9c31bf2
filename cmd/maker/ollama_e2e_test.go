//go:build e2e

// The end-to-end test against a real inference server: Ollama v0.6.5
// serving the tiny real model (../shared/models, a 260K-parameter
// TinyStories model), driven through both langchaingo clients, ollama:
// (native) and openai: (on /v1). Run it with
//
//	MDAP_OLLAMA_BIN=/path/to/ollama go test -tags e2e -run TestOllamaE2E ./cmd/maker
//
// or through .ci/run, which installs Ollama v0.6.5 when no binary of that
// version is there. The test serves the model itself, on a free loopback
// port; MDAP_OLLAMA_URL (with MDAP_OLLAMA_MODEL, default tiny) points it
// at a server already serving it instead; MDAP_TINY_MODEL overrides the
// model file's path. Without a server it is skipped, saying so, except
// under CI=true, where it fails.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ollamaVersion is the server version the test is known to work with.
const ollamaVersion = "v0.6.5"

// howToRun says how to run the test, for a skip or a failure.
const howToRun = "install Ollama " + ollamaVersion + " (GOBIN=$(go env GOPATH)/bin go install github.com/ollama/ollama@" + ollamaVersion +
	", 3 to 12 minutes) and set MDAP_OLLAMA_BIN to it, or set MDAP_OLLAMA_URL to a server serving the tiny model, or run .ci/run"

// unavailable skips the test, or fails it under CI=true.
func unavailable(t *testing.T, format string, a ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, a...) + "; to run this test, " + howToRun
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true: the real-server test must run: " + msg)
	}
	t.Skip(msg)
}

// ollamaBinary finds an ollama binary of ollamaVersion: MDAP_OLLAMA_BIN,
// $(go env GOPATH)/bin/ollama, or ollama on PATH.
func ollamaBinary(t *testing.T) string {
	t.Helper()
	var candidates []string
	if b := os.Getenv("MDAP_OLLAMA_BIN"); b != "" {
		candidates = append(candidates, b)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, p := range filepath.SplitList(strings.TrimSpace(string(out))) {
			candidates = append(candidates, filepath.Join(p, "bin", "ollama"))
		}
	}
	if p, err := exec.LookPath("ollama"); err == nil {
		candidates = append(candidates, p)
	}
	var tried []string
	for _, c := range candidates {
		out, err := exec.Command("go", "version", "-m", c).Output()
		if err == nil && strings.Contains(string(out), "\tmod\tgithub.com/ollama/ollama\t"+ollamaVersion+"\t") {
			return c
		}
		tried = append(tried, c)
	}
	unavailable(t, "no ollama binary of version %s (tried %v)", ollamaVersion, tried)
	return ""
}

// tinyModel is the model file: MDAP_TINY_MODEL, or the shared folder
// beside the checkout.
func tinyModel(t *testing.T) string {
	t.Helper()
	p := os.Getenv("MDAP_TINY_MODEL")
	if p == "" {
		p = filepath.Join("..", "..", "..", "shared", "models", "stories260K.gguf")
	}
	abs, err := filepath.Abs(p)
	require.NoError(t, err)
	if _, err := os.Stat(abs); err != nil {
		unavailable(t, "the tiny model is not at %s (set MDAP_TINY_MODEL)", abs)
	}
	return abs
}

// modelfile is the shared README's: without TEMPLATE the server drops the
// system message; without num_thread 1 a loaded 2-core machine is slow.
const modelfile = `FROM %s
TEMPLATE """{{ if .System }}{{ .System }}
{{ end }}{{ .Prompt }}"""
PARAMETER num_thread 1
`

// serveOllama returns the URL of a server serving the tiny model, and the
// model's name: MDAP_OLLAMA_URL, or one it starts and stops with t.
func serveOllama(t *testing.T) (string, string) {
	t.Helper()
	if u := os.Getenv("MDAP_OLLAMA_URL"); u != "" {
		name := os.Getenv("MDAP_OLLAMA_MODEL")
		if name == "" {
			name = "tiny"
		}
		return strings.TrimRight(u, "/"), name
	}
	bin, gguf := ollamaBinary(t), tinyModel(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	dir := t.TempDir()
	env := append(os.Environ(), "OLLAMA_HOST="+addr, "OLLAMA_MODELS="+filepath.Join(dir, "models"), "OLLAMA_KEEP_ALIVE=-1", "HOME="+dir)
	logPath := filepath.Join(dir, "ollama.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	serve := exec.Command(bin, "serve")
	serve.Env, serve.Stdout, serve.Stderr = env, logFile, logFile
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the server and its runner, stopped together
	if err := serve.Start(); err != nil {
		unavailable(t, "%s serve did not start: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = serve.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-serve.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-serve.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("ollama serve log (last 4 KiB):\n%s", tail(b, 4096))
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/api/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			unavailable(t, "%s serve exited: %s", bin, tail(b, 2048))
		default:
		}
		if time.Now().After(deadline) {
			unavailable(t, "%s serve did not answer on %s within a minute", bin, base)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mf := filepath.Join(dir, "Modelfile")
	require.NoError(t, os.WriteFile(mf, []byte(fmt.Sprintf(modelfile, gguf)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	create := exec.CommandContext(ctx, bin, "create", "tiny", "-f", mf)
	create.Env = env
	if out, err := create.CombinedOutput(); err != nil {
		unavailable(t, "ollama create tiny failed: %v: %s", err, tail(out, 2048))
	}
	return base, "tiny"
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// usageProxy sits between maker and the server and adds up the token
// usage the server reports, in either API.
type usageProxy struct {
	*httptest.Server
	mu            sync.Mutex
	calls         int
	input, output int
	reasons       map[string]int
}

func newUsageProxy(t *testing.T, target string) *usageProxy {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	p := &usageProxy{reasons: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasSuffix(resp.Request.URL.Path, "/chat") && !strings.HasSuffix(resp.Request.URL.Path, "/chat/completions") {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		if err != nil || resp.StatusCode != 200 {
			return err
		}
		// One JSON value (OpenAI), or Ollama's stream of lines (langchaingo's
		// Ollama client leaves "stream" out, so the server streams), whose
		// last line holds the counts.
		var v struct {
			PromptEvalCount int    `json:"prompt_eval_count"`
			EvalCount       int    `json:"eval_count"`
			Done            bool   `json:"done"`
			DoneReason      string `json:"done_reason"`
			Usage           struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		for dec.More() {
			v.Choices = nil
			if err := dec.Decode(&v); err != nil {
				return nil
			}
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.calls++
		p.input += v.PromptEvalCount + v.Usage.PromptTokens
		p.output += v.EvalCount + v.Usage.CompletionTokens
		p.reasons[v.DoneReason]++
		for _, c := range v.Choices {
			p.reasons[c.FinishReason]++
		}
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

// runMaker runs the binary and returns its exit status, its --json
// summary and its stderr, failing the test if it runs over limit.
func runMaker(t *testing.T, limit time.Duration, args ...string) (int, hanoiSummary, string) {
	t.Helper()
	c := start(t, nil, append(args, "--json", "--progress", "off")...)
	code := c.wait(t, limit)
	var s hanoiSummary
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s), "stdout %q, stderr %q", c.stdout.String(), c.stderr.String())
	return code, s, c.stderr.String()
}

func TestOllamaE2E(t *testing.T) {
	base, name := serveOllama(t)
	clients := []struct{ spec, url string }{
		{"ollama:" + name, ""}, // the server root
		{"openai:" + name, "/v1"},
	}

	// Story text: every reply is red-flagged, the step is undecided, and
	// the report holds exactly the server's token counts.
	for _, c := range clients {
		t.Run("story text is red-flagged "+c.spec, func(t *testing.T) {
			proxy := newUsageProxy(t, base)
			start := time.Now()
			code, s, stderr := runMaker(t, 2*time.Minute, "hanoi", "--disks", "2", "--model", c.spec, "--base-url", proxy.URL+c.url,
				"--k", "2", "--max-samples", "6", "--max-tokens", "24", "--verbose")
			took := time.Since(start)
			t.Logf("%s: %d samples in %s, flags %v, tokens in %d out %d", c.spec, s.Samples, took.Round(time.Millisecond), s.Flags, s.InputTokens, s.OutputTokens)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, s.Error, "vote: undecided: budget of 6 samples spent without a lead of 2")
			assert.Contains(t, stderr, "maker: step failed: step 0: vote: undecided: budget of 6 samples spent")
			assert.Equal(t, 6, s.Flagged)
			assert.Zero(t, s.Valid)
			assert.Zero(t, s.Errors)
			total := 0
			for _, n := range s.Flags {
				total += n
			}
			assert.Equal(t, s.Flagged, total, "flags counted by reason")
			assert.Positive(t, s.Flags["cut off"], "a reply stopped at the 24-token cap (done_reason/finish_reason length) is cut off")
			assert.Equal(t, s.Flags["cut off"], proxy.reasons["length"], "exactly the replies the server stopped for length")
			assert.Equal(t, 6, strings.Count(stderr, "red flag"), "--verbose shows each flagged reply")
			assert.Equal(t, proxy.input, s.InputTokens, "input tokens as the server reported them")
			assert.Equal(t, proxy.output, s.OutputTokens, "output tokens as the server reported them")
			assert.Equal(t, 6, proxy.calls)
			assert.Less(t, took, 90*time.Second)
		})
	}

	// Several samples per request: Ollama's APIs answer one choice
	// whatever n says; every sample is still drawn, once.
	for _, c := range clients {
		t.Run("samples per request, n ignored "+c.spec, func(t *testing.T) {
			proxy := newUsageProxy(t, base)
			code, s, stderr := runMaker(t, 2*time.Minute, "hanoi", "--disks", "2", "--model", c.spec, "--base-url", proxy.URL+c.url,
				"--k", "3", "--max-samples", "9", "--max-tokens", "24", "--samples-per-call", "auto")
			t.Logf("%s --samples-per-call auto: %d samples in %d requests (server calls %d), exit %d", c.spec, s.Samples, s.Requests, proxy.calls, code)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, s.Error, "vote: undecided: budget of 9 samples spent")
			assert.Equal(t, 9, s.Flagged+s.Valid, "every sample of the budget drawn, none lost")
			assert.Equal(t, proxy.calls, s.Requests, "the requests counted are the server's")
			assert.Equal(t, proxy.input, s.InputTokens)
			assert.Equal(t, proxy.output, s.OutputTokens)
		})
	}

	// Structured output: the same model's replies parse and reach the vote.
	for _, c := range clients {
		t.Run("structured output reaches the vote "+c.spec, func(t *testing.T) {
			proxy := newUsageProxy(t, base)
			code, s, stderr := runMaker(t, 3*time.Minute, "hanoi", "--disks", "2", "--model", c.spec, "--base-url", proxy.URL+c.url,
				"--k", "2", "--max-samples", "10", "--max-tokens", "120", "--structured")
			t.Logf("%s --structured: %d steps, %d samples: %d valid, %d flagged %v, %d wrong steps, exit %d", c.spec, s.Steps, s.Samples, s.Valid, s.Flagged, s.Flags, s.WrongSteps, code)
			assert.Contains(t, []int{0, 1}, code, stderr)
			assert.GreaterOrEqual(t, s.Valid, 2, "valid replies voted")
			assert.Less(t, float64(s.Flagged), 0.5*float64(s.Samples), "most replies parse")
			assert.Positive(t, s.Steps, "a step was decided")
			assert.Equal(t, proxy.input, s.InputTokens)
			assert.Equal(t, proxy.output, s.OutputTokens)
		})
	}

	// Permanent errors against the real server stop at once.
	t.Run("unknown model stops at once", func(t *testing.T) {
		for _, c := range clients {
			start := time.Now()
			spec := strings.Split(c.spec, ":")[0] + ":nosuch"
			code, s, stderr := runMaker(t, time.Minute, "hanoi", "--disks", "2", "--model", spec, "--base-url", base+c.url)
			assert.Equal(t, 1, code, spec)
			assert.Contains(t, stderr, "unknown model: "+spec+" at "+base+c.url, spec)
			assert.Contains(t, stderr, name, "%s: the server's models are listed", spec)
			assert.LessOrEqual(t, s.Samples, 3, spec)
			assert.Less(t, time.Since(start), 10*time.Second, spec)
		}
	})

	// Voted decomposition on the tiny model ends honestly.
	t.Run("voted decomposition ends honestly", func(t *testing.T) { decompositionE2E(t, base, name) })
	t.Run("a problem spec ends honestly", func(t *testing.T) { problemSpecE2E(t, base, name) })

	// The two-tool spec task: the requests carry the declarations.
	t.Run("declared tools", func(t *testing.T) { declaredToolsE2E(t, base, name) })

	// A spec task through maker run, and through the library.
	t.Run("spec task", func(t *testing.T) {
		const specText = `{
			"name": "pick",
			"system": "Pick the next number, 1, 2 or 3.",
			"initial_state": 0,
			"answer": {"type": "object", "properties": {"state": {"type": "integer", "enum": [1, 2, 3]}, "done": {"type": "boolean"}}, "required": ["state", "done"], "additionalProperties": false},
			"max_steps": 2
		}`
		path := filepath.Join(t.TempDir(), "pick.json")
		require.NoError(t, os.WriteFile(path, []byte(specText), 0o644))
		for _, c := range clients {
			proxy := newUsageProxy(t, base)
			cmd := start(t, nil, "run", path, "--model", c.spec, "--base-url", proxy.URL+c.url, "--structured",
				"--k", "2", "--max-samples", "10", "--max-tokens", "60", "--json", "--progress", "off")
			code := cmd.wait(t, 2*time.Minute)
			var s specSummary
			require.NoError(t, json.Unmarshal(cmd.stdout.Bytes(), &s), "stdout %q, stderr %q", cmd.stdout.String(), cmd.stderr.String())
			t.Logf("maker run --model %s --structured: exit %d, %d steps, %d samples: %d valid, %d flagged %v, state %s; %s", c.spec, code, s.Steps, s.Samples, s.Valid, s.Flagged, s.Flags, s.State, s.Error)
			assert.Contains(t, []int{0, 1}, code, cmd.stderr.String())
			assert.GreaterOrEqual(t, s.Valid, 2, "%s: valid replies voted", c.spec)
			assert.Positive(t, s.Steps, "%s: a step was decided", c.spec)
			assert.Equal(t, proxy.input, s.InputTokens, c.spec)
			assert.Equal(t, proxy.output, s.OutputTokens, c.spec)
		}

		sp, err := spec.Parse([]byte(specText))
		require.NoError(t, err)
		m, err := models.Open("ollama:"+name, models.Options{BaseURL: base, Timeout: time.Minute})
		require.NoError(t, err)
		answers := map[string]bool{}
		var mu sync.Mutex
		s := &maker.Solver{
			Config: maker.Config{MaxTokens: 60, Structured: true, Vote: vote.Config{K: 2, MaxSamples: 10}},
			Model:  m,
			OnSample: func(e maker.SampleEvent) {
				if e.Flag == nil && e.Err == nil {
					mu.Lock()
					answers[strings.Join(strings.Fields(e.Text), "")] = true
					mu.Unlock()
				}
			},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		rep, err := s.Solve(ctx, spec.New(sp))
		t.Logf("library, ollama:%s: %d steps, %d samples: %d valid, %d flagged, %d distinct answers; %v", name, rep.Steps, rep.Launched, rep.Valid, rep.Flagged, len(answers), err)
		assert.GreaterOrEqual(t, rep.Valid, 2)
	})
}
