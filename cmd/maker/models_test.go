package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noProviderEnv clears the environment variables the models read.
func noProviderEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "OLLAMA_HOST", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"} {
		t.Setenv(k, "")
	}
}

// fakeServer is a loopback server speaking both OpenAI's
// /v1/chat/completions and Ollama's /api/chat. answer gives the reply to
// a request's last message; it may write the response itself and return
// "" to say so.
type fakeServer struct {
	*httptest.Server
	chats atomic.Int32
}

const promptTokens, completionTokens = 100, 20

func newFake(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, prompt string) string) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if r.Method == http.MethodPost {
			f.chats.Add(1)
			_ = json.NewDecoder(r.Body).Decode(&req)
		}
		prompt := ""
		if n := len(req.Messages); n > 0 {
			prompt = req.Messages[n-1].Content
		}
		text := answer(w, r, prompt)
		if text == "" {
			return
		}
		content, _ := json.Marshal(text)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/api/chat") {
			fmt.Fprintf(w, `{"model":"m","message":{"role":"assistant","content":%s},"done_reason":"stop","done":true,"prompt_eval_count":%d,"eval_count":%d}`, content, promptTokens, completionTokens)
			return
		}
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, content, promptTokens, completionTokens, promptTokens+completionTokens)
	}))
	t.Cleanup(f.Close)
	return f
}

// rightMove answers every Hanoi step correctly.
func rightMove(_ http.ResponseWriter, _ *http.Request, prompt string) string {
	s, prev, err := hanoi.ParsePrompt(prompt)
	if err != nil {
		return "I do not know"
	}
	a, err := hanoi.CorrectAnswer(s, prev)
	if err != nil {
		return "I do not know"
	}
	return a.Text()
}

func TestEnsembleOfRealModelsReportsEachWithItsCost(t *testing.T) {
	noProviderEnv(t)
	srv := newFake(t, rightMove)
	// One --base-url serves every model; an ensemble across providers
	// takes each provider's server from its environment variable.
	t.Setenv("OLLAMA_HOST", srv.URL)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	code, out, stderr := cli(t, "hanoi", "--disks", "3", "--json", "--progress", "off",
		"--model", "openai:a=1/2", "--model", "ollama:b", "--price-in", "0.5", "--price-out", "1.5")
	require.Equal(t, 0, code, stderr)
	var s hanoiSummary
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	assert.True(t, s.Solved)
	require.Len(t, s.Models, 2)
	a, b := s.Models[0], s.Models[1]
	assert.Equal(t, "openai:a@"+srv.URL+"/v1", a.Model)
	assert.Equal(t, "ollama:b@"+srv.URL, b.Model)
	assert.Equal(t, s.Samples, a.Samples+b.Samples)
	assert.Equal(t, 7*3, a.WinnerVotes+b.WinnerVotes, "7 steps, k = 3, every vote for the winner")
	assert.Equal(t, 1.0, a.PriceIn, "the spec's own price")
	assert.Equal(t, 2.0, a.PriceOut)
	assert.Equal(t, 0.5, b.PriceIn, "--price-in for a model whose spec has none")
	assert.Equal(t, 1.5, b.PriceOut)
	for _, m := range s.Models {
		assert.Equal(t, m.Samples*promptTokens, m.InputTokens, m.Model)
		assert.Equal(t, m.Samples*completionTokens, m.OutputTokens, m.Model)
		assert.InDelta(t, (float64(m.InputTokens)*m.PriceIn+float64(m.OutputTokens)*m.PriceOut)/1e6, m.Cost, 1e-12, m.Model)
	}
	assert.InDelta(t, a.Cost+b.Cost, s.Cost, 1e-12)

	code, out, _ = cli(t, "hanoi", "--disks", "3", "--progress", "off", "--model", "openai:a=1/2", "--model", "ollama:b")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "model openai:a=1/2, ollama:b: solved true")
	assert.Regexp(t, `  openai:a@\S+: samples \d+, valid \d+, flagged 0, errors 0, winner votes \d+, tokens in \d+, out \d+, cost \$0\.\d{4}`, out)
	assert.Regexp(t, `  ollama:b@\S+: samples \d+`, out)
}

func TestSimEnsembleAndPriceFlags(t *testing.T) {
	t.Parallel()
	code, s := hanoiJSON(t, "--disks", "4", "--model", "sim", "--model", "sim", "--price-in", "2", "--price-out", "4")
	require.Equal(t, 0, code)
	require.Len(t, s.Models, 2)
	assert.Equal(t, s.Samples, s.Models[0].Samples+s.Models[1].Samples)
	assert.Greater(t, s.Cost, 0.0)
	assert.InDelta(t, (float64(s.InputTokens)*2+float64(s.OutputTokens)*4)/1e6, s.Cost, 1e-12)

	code, s = hanoiJSON(t, "--disks", "2")
	require.Equal(t, 0, code)
	require.Len(t, s.Models, 1, "one model, one entry")
	assert.Zero(t, s.Cost)
}

// deadURL returns a loopback URL where nothing listens.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	u := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	return u
}

// The permanent errors stop the run at once, exit 1, and say what to fix.
func TestPermanentErrorsStopTheRunAtOnce(t *testing.T) {
	noProviderEnv(t)
	// A server per case: a cancelled call of one case may still reach
	// its server after the next case began.
	notFoundHandler := func(w http.ResponseWriter, r *http.Request, _ string) string {
		switch r.URL.Path {
		case "/v1/models":
			return writeRaw(w, 200, `{"object":"list","data":[{"id":"tiny:latest"}]}`)
		case "/api/tags":
			return writeRaw(w, 200, `{"models":[{"name":"tiny:latest"}]}`)
		case "/v1/chat/completions":
			return writeRaw(w, 404, `{"error":{"message":"model \"nosuch\" not found, try pulling it first","type":"api_error"}}`)
		}
		return writeRaw(w, 404, `{"error":"model \"nosuch\" not found, try pulling it first"}`)
	}
	notFound, notFound2, notFound3 := newFake(t, notFoundHandler), newFake(t, notFoundHandler), newFake(t, notFoundHandler)
	unauthorized := newFake(t, func(w http.ResponseWriter, r *http.Request, _ string) string {
		return writeRaw(w, 401, `{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`)
	})
	dead := deadURL(t)
	for _, c := range []struct {
		name   string
		srv    *fakeServer
		args   []string
		stderr []string
	}{
		{"unknown model, openai", notFound, []string{"--model", "openai:nosuch", "--base-url", notFound.URL + "/v1"},
			[]string{"maker: step failed: step 0: permanent provider error: unknown model: openai:nosuch at " + notFound.URL + "/v1: the server has no model \"nosuch\"", "it serves tiny:latest: give one as --model openai:NAME"}},
		{"unknown model, ollama", notFound2, []string{"--model", "ollama:nosuch", "--base-url", notFound2.URL},
			[]string{"unknown model: ollama:nosuch at " + notFound2.URL + ": the Ollama server has no model \"nosuch\"", "it has tiny:latest"}},
		{"wrong base URL for openai", notFound3, []string{"--model", "openai:tiny", "--base-url", notFound3.URL},
			[]string{"not found: openai:tiny at " + notFound3.URL + ":", "openai: wants the API root with its /v1: use --base-url " + notFound3.URL + "/v1"}},
		{"authentication", unauthorized, []string{"--model", "openai:gpt-4o-mini", "--base-url", unauthorized.URL + "/v1"},
			[]string{"authentication failed: openai:gpt-4o-mini at " + unauthorized.URL + "/v1: HTTP 401: Incorrect API key provided: the server wants an API key: set OPENAI_API_KEY"}},
		{"connection refused, ollama", nil, []string{"--model", "ollama:tiny", "--base-url", dead},
			[]string{"server unreachable: ollama:tiny at " + dead + ": nothing listens there (connection refused): start the server, or point --base-url or OLLAMA_HOST"}},
		{"connection refused, openai", nil, []string{"--model", "openai:tiny", "--base-url", dead + "/v1"},
			[]string{"server unreachable: openai:tiny at " + dead + "/v1: nothing listens there (connection refused)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, out, stderr := cli(t, append([]string{"hanoi", "--disks", "2", "--json", "--progress", "off"}, c.args...)...)
			took := time.Since(start)
			assert.Equal(t, 1, code, stderr)
			for _, w := range c.stderr {
				assert.Contains(t, stderr, w)
			}
			assert.NotContains(t, stderr, "too many errors", "the error budget is not spent")
			assert.Less(t, took, 5*time.Second)
			var s hanoiSummary
			require.NoError(t, json.Unmarshal([]byte(out), &s))
			assert.LessOrEqual(t, s.Samples, 3, "the first wave only")
			assert.Contains(t, s.Error, "permanent provider error")
			if c.srv != nil {
				assert.LessOrEqual(t, c.srv.chats.Load(), int32(3), "chat calls")
			}
		})
	}
}

func writeRaw(w http.ResponseWriter, status int, body string) string {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
	return ""
}

func TestRateLimitAndCutStreamsSpendTheBudgetWithBackoff(t *testing.T) {
	noProviderEnv(t)
	limited := newFake(t, func(w http.ResponseWriter, r *http.Request, _ string) string {
		w.Header().Set("Retry-After-Ms", "150")
		return writeRaw(w, 429, `{"error":{"message":"Rate limit reached for requests"}}`)
	})
	start := time.Now()
	code, _, stderr := cli(t, "hanoi", "--disks", "2", "--progress", "off", "--k", "1", "--max-errors", "2",
		"--model", "openai:tiny", "--base-url", limited.URL+"/v1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "vote: too many errors: 3 failed draws, at most 2 allowed")
	assert.Contains(t, stderr, "rate limited: openai:tiny at "+limited.URL+"/v1: HTTP 429: Rate limit reached for requests (openai: rate_limit); the server asks for a pause of 150ms")
	assert.Equal(t, int32(3), limited.chats.Load())
	assert.GreaterOrEqual(t, time.Since(start), 450*time.Millisecond, "each sample waited the server's delay")

	cut := newFake(t, func(w http.ResponseWriter, r *http.Request, _ string) string {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"model":"tiny","message":{"role":"assistant","content":"Once up`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	code, out, stderr := cli(t, "hanoi", "--disks", "2", "--json", "--progress", "off", "--max-errors", "3",
		"--model", "ollama:tiny", "--base-url", cut.URL)
	assert.Equal(t, 1, code)
	var s hanoiSummary
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	assert.Equal(t, 4, s.Errors, "a cut stream is a provider error")
	assert.Zero(t, s.Flagged, "not an empty red flag")
	assert.Contains(t, stderr, `reply cut short: ollama:tiny at `+cut.URL+`: the reply stream ended after`)
}

func TestVerboseAndProgressShowEachSample(t *testing.T) {
	noProviderEnv(t)
	story := "Once upon a time, there was a little girl named Lily. She liked to play with her ball in the park every day."
	srv := newFake(t, func(w http.ResponseWriter, r *http.Request, _ string) string {
		content, _ := json.Marshal(story)
		return writeRaw(w, 200, fmt.Sprintf(`{"model":"tiny","message":{"role":"assistant","content":%s},"done_reason":"length","done":true,"prompt_eval_count":1300,"eval_count":20}`, content))
	})
	code, _, stderr := cli(t, "hanoi", "--disks", "2", "--progress", "on", "--verbose", "--k", "2", "--max-samples", "4",
		"--max-tokens", "20", "--model", "ollama:tiny", "--base-url", srv.URL)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `maker: step 0 sample 0 (ollama:tiny@`+srv.URL+`): red flag "cut off": cut off; 20 output tokens: "Once upon a time, there was a little girl named Lily. She liked to play with her..."`)
	assert.Equal(t, 4, strings.Count(stderr, `red flag "cut off"`))
	assert.Regexp(t, `step 1: \d samples?, 0 valid, flagged: cut off \d`, stderr, "the bar shows the step being decided")
	assert.Contains(t, stderr, "maker: step failed: step 0: vote: undecided: budget of 4 samples spent")
}

func TestModelFlagsUsageErrors(t *testing.T) {
	noProviderEnv(t)
	dir := t.TempDir()
	j := filepath.Join(dir, "j.jsonl")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--price-in", "-1"}, "--price-in -1: use dollars per million tokens, from 0 to 1e+06"},
		{[]string{"--price-out", "NaN"}, "--price-out NaN"},
		{[]string{"--model", "openai:x=abc"}, `--model "openai:x=abc": bad model spec: price "abc"`},
		{[]string{"--model", "sim", "--model", "gpt4"}, `--model "gpt4"`},
		{[]string{"--structured"}, "--structured: applies to a real model"},
		{[]string{"--structured", "--model", "anthropic:claude-3-5-haiku"}, `--structured plus --model "anthropic:claude-3-5-haiku": langchaingo v0.1.14 has no structured output for anthropic`},
		{[]string{"--model", "ollama:tiny", "--base-url", "http://127.0.0.1:11434/v1"}, `--base-url "http://127.0.0.1:11434/v1": ollama: wants the server root, http://127.0.0.1:11434`},
		{[]string{"--model", "ollama:tiny", "--model", "openai:tiny", "--seed", "2"}, "--seed applies to --model sim only; a real model (ollama:tiny, openai:tiny)"},
		{[]string{"--model", "openai:gpt-4o"}, "--model openai:gpt-4o: bad model spec: openai:gpt-4o at https://api.openai.com/v1 needs an API key: set OPENAI_API_KEY"},
	} {
		code, out, stderr := cli(t, append([]string{"hanoi", "--journal", j}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Empty(t, out, "%v", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.NoFileExists(t, j, "%v: nothing written", c.args)
	}
	t.Setenv("OLLAMA_HOST", "127.0.0.1:99999")
	code, _, stderr := cli(t, "hanoi", "--model", "ollama:tiny")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--model "ollama:tiny": OLLAMA_HOST="127.0.0.1:99999": port "99999" is not a number from 1 to 65535`)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestSolveRefusesWhatItCannotSend(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--structured", "--verbose"} {
		code, out, stderr := cli(t, "solve", "../../testdata/batch/tasks.jsonl", "--out", filepath.Join(t.TempDir(), "r.jsonl"), flag)
		assert.Equal(t, 2, code, flag)
		assert.Empty(t, out)
		assert.Contains(t, stderr, flag+" does not apply to maker solve yet", flag)
	}
}

// TestMaxErrorsZeroToleratesNone: --max-errors 0 means what it says, no
// provider error tolerated (it used to mean the default, 10): the first
// failed call fails the step; the default is 10.
func TestMaxErrorsZeroToleratesNone(t *testing.T) {
	noProviderEnv(t)
	limited := newFake(t, func(w http.ResponseWriter, r *http.Request, _ string) string {
		return writeRaw(w, 500, `{"error":{"message":"boom"}}`)
	})
	code, _, stderr := cli(t, "hanoi", "--disks", "2", "--progress", "off", "--k", "1", "--max-errors", "0",
		"--model", "openai:tiny", "--base-url", limited.URL+"/v1", "--timeout", "5s")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "vote: too many errors: 1 failed draws, at most 0 allowed")
	assert.Equal(t, int32(1), limited.chats.Load(), "one call, no retry")
}
