package models_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/ollama"
	"github.com/mdap-go/mdap/maker/models/openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestOpenSpecErrors(t *testing.T) {
	cleanEnv(t)
	for _, spec := range []string{"", "gpt-4", "openai:", "bard:x", "openai:gpt-4.1-mini", "anthropic:claude", "sim"} {
		_, err := models.Open(spec, models.Options{})
		assert.ErrorIs(t, err, models.ErrSpec, spec)
	}
}

// TestOpenAICompatibleServer talks to a real HTTP server on loopback, the
// way a local vLLM, llama.cpp or Ollama /v1 endpoint would answer.
func TestOpenAICompatibleServer(t *testing.T) {
	cleanEnv(t)
	var got map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/v1/chat/completions", r.URL.Path)
		auth = r.Header.Get("Authorization")
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"{\"move\":[1,0,2]}"},"finish_reason":"length"}],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}`))
	}))
	defer srv.Close()

	m, err := models.Open("openai:tiny", models.Options{BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.WithMaxTokens(33))
	require.NoError(t, err)
	c := resp.Choices[0]
	assert.Equal(t, `{"move":[1,0,2]}`, c.Content)
	assert.Equal(t, "length", c.StopReason)
	assert.Equal(t, 7, c.GenerationInfo["CompletionTokens"])
	assert.Equal(t, "Bearer placeholder", auth)
	assert.EqualValues(t, 33, got["max_tokens"], "local servers get the legacy max_tokens field")
	assert.Equal(t, "tiny", got["model"])
}

func TestProviderErrorsAreMapped(t *testing.T) {
	cleanEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}}`))
	}))
	defer srv.Close()
	m, err := models.Open("openai:tiny", models.Options{BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	require.Error(t, err)
	assert.True(t, llms.IsRateLimitError(err), "error %v should be recognised as a rate limit", err)
}

func TestParseSpecAndPrices(t *testing.T) {
	s, err := models.ParseSpec("openai:gpt-4o-mini=0.15/0.60")
	require.NoError(t, err)
	assert.Equal(t, models.Spec{Provider: "openai", Name: "gpt-4o-mini", Price: &maker.Price{InputPerMillion: 0.15, OutputPerMillion: 0.60}}, s)
	assert.Equal(t, "openai:gpt-4o-mini", s.String())
	s, err = models.ParseSpec("openai:meta-llama/Llama-3.1-8B-Instruct")
	require.NoError(t, err)
	assert.Equal(t, "meta-llama/Llama-3.1-8B-Instruct", s.Name)
	assert.Nil(t, s.Price)
	s, err = models.ParseSpec("ollama:qwen3:0.6b=$0/$0")
	require.NoError(t, err)
	assert.Equal(t, "qwen3:0.6b", s.Name)
	assert.Equal(t, &maker.Price{}, s.Price)

	for spec, want := range map[string]string{
		"openai:x=0.15":       "want two to four prices separated by /",
		"openai:x=a/1":        `"a" is not a number`,
		"openai:x=-1/1":       "a price is a finite number of 0 or more",
		"openai:x=1/Inf":      "a price is a finite number of 0 or more",
		"openai:=1/2":         "no model name",
		"sim=1/2":             "the simulated model costs nothing",
		"openai: gpt-4o-mini": "white space",
	} {
		_, err := models.ParseSpec(spec)
		assert.ErrorIs(t, err, models.ErrSpec, spec)
		assert.ErrorContains(t, err, want, spec)
	}
}

func TestBuiltinPrices(t *testing.T) {
	for name, want := range map[string]maker.Price{
		"gpt-4o-mini":            {InputPerMillion: 0.15, OutputPerMillion: 0.60, CachedInputPerMillion: 0.075},
		"gpt-4o-mini-2024-07-18": {InputPerMillion: 0.15, OutputPerMillion: 0.60, CachedInputPerMillion: 0.075},
		"gpt-4o":                 {InputPerMillion: 2.50, OutputPerMillion: 10, CachedInputPerMillion: 1.25},
		"gpt-4.1-mini":           {InputPerMillion: 0.40, OutputPerMillion: 1.60, CachedInputPerMillion: 0.10},
		"gpt-3.5-turbo":          {InputPerMillion: 0.50, OutputPerMillion: 1.50},
	} {
		p, ok := models.BuiltinPrice("openai", name)
		assert.True(t, ok, name)
		assert.Equal(t, want, p, name)
	}
	p, ok := models.BuiltinPrice("anthropic", "claude-3-5-haiku-20241022")
	assert.True(t, ok)
	assert.Equal(t, maker.Price{InputPerMillion: 0.80, OutputPerMillion: 4, CachedInputPerMillion: 0.08, CacheWritePerMillion: 1}, p, "Anthropic: reads at 0.1x, writes at 1.25x")
	for _, name := range []string{"gpt-4o-audio-preview", "tiny", "gpt-4o-minis"} {
		_, ok := models.BuiltinPrice("openai", name)
		assert.False(t, ok, name)
	}
	_, ok = models.BuiltinPrice("ollama", "gpt-4o")
	assert.False(t, ok)
}

func TestModelsArePriced(t *testing.T) {
	cleanEnv(t)
	t.Setenv(openai.EnvKey, "sk-test")
	price := func(spec string, o models.Options) maker.Price {
		m, err := models.Open(spec, o)
		require.NoError(t, err, spec)
		return m.(maker.Priced).Price()
	}
	in, out := 1.0, 2.0
	assert.Equal(t, maker.Price{InputPerMillion: 0.15, OutputPerMillion: 0.60, CachedInputPerMillion: 0.075}, price("openai:gpt-4o-mini", models.Options{}), "the built-in table at OpenAI's own API")
	assert.Equal(t, maker.Price{InputPerMillion: 0.4, OutputPerMillion: 1.6, CachedInputPerMillion: 0.1}, price("openai:gpt-4.1-mini", models.Options{}), "gpt-4.1-mini: cached input 75% off")
	assert.Equal(t, maker.Price{InputPerMillion: 3, OutputPerMillion: 4, CachedInputPerMillion: 0.5, CacheWritePerMillion: 5}, price("openai:x=3/4/0.5/5", models.Options{}), "a spec's cache prices")
	assert.Equal(t, maker.Price{}, price("openai:gpt-4o-mini", models.Options{BaseURL: "http://127.0.0.1:8000/v1"}), "another server: its own price, unknown")
	assert.Equal(t, maker.Price{InputPerMillion: 1, OutputPerMillion: 0.60}, price("openai:gpt-4o-mini", models.Options{InputPrice: &in}), "one flag over the table")
	assert.Equal(t, maker.Price{InputPerMillion: 1, OutputPerMillion: 2}, price("ollama:tiny", models.Options{InputPrice: &in, OutputPrice: &out}))
	assert.Equal(t, maker.Price{InputPerMillion: 3, OutputPerMillion: 4}, price("openai:gpt-4o-mini=3/4", models.Options{InputPrice: &in, OutputPrice: &out}), "the spec's own price first")
}

func TestEnvironmentAndIdentity(t *testing.T) {
	cleanEnv(t)
	m, err := models.Open("ollama:tiny", models.Options{})
	require.NoError(t, err)
	assert.Equal(t, "ollama:tiny@http://127.0.0.1:11434", maker.ModelIdentity(m))

	for host, want := range map[string]string{
		"127.0.0.1:11555":         "http://127.0.0.1:11555",
		"0.0.0.0":                 "http://0.0.0.0:11434",
		"https://ollama.example":  "https://ollama.example:443",
		"http://[::1]:9000/proxy": "http://[::1]:9000/proxy",
		"example.com":             "http://example.com:11434",
	} {
		t.Setenv(ollama.EnvHost, host)
		m, err := models.Open("ollama:tiny", models.Options{})
		require.NoError(t, err, host)
		assert.Equal(t, "ollama:tiny@"+want, maker.ModelIdentity(m), host)
	}
	t.Setenv(ollama.EnvHost, "127.0.0.1:99999")
	_, err = models.Open("ollama:tiny", models.Options{})
	assert.ErrorIs(t, err, models.ErrSpec)
	assert.ErrorContains(t, err, `OLLAMA_HOST="127.0.0.1:99999"`)
	t.Setenv(ollama.EnvHost, "")

	// A local OpenAI-compatible server from the environment needs no key.
	t.Setenv(openai.EnvURL, "http://127.0.0.1:8000/v1")
	m, err = models.Open("openai:llama=1/2", models.Options{})
	require.NoError(t, err)
	assert.Equal(t, "openai:llama@http://127.0.0.1:8000/v1", maker.ModelIdentity(m), "no price, no key")
	t.Setenv(openai.EnvURL, "")
	_, err = models.Open("openai:gpt-4o", models.Options{})
	assert.ErrorIs(t, err, models.ErrSpec)
	assert.ErrorContains(t, err, "needs an API key: set OPENAI_API_KEY, or give --base-url (or OPENAI_BASE_URL) for another OpenAI-compatible server")
	t.Setenv(openai.EnvKey, "sk-secret")
	m, err = models.Open("openai:gpt-4o", models.Options{})
	require.NoError(t, err)
	assert.Equal(t, "openai:gpt-4o@https://api.openai.com/v1", maker.ModelIdentity(m))
	assert.NotContains(t, fmt.Sprint(m), "sk-secret")
}

// langchaingo's Ollama client calls log.Fatal on a URL it cannot parse:
// Open refuses it first.
func TestOpenRefusesABaseURLWithoutScheme(t *testing.T) {
	cleanEnv(t)
	for _, base := range []string{"127.0.0.1:11434", "localhost:11434", "http://", "ftp://host", "http://host/?q=1"} {
		for _, spec := range []string{"ollama:tiny", "openai:tiny"} {
			_, err := models.Open(spec, models.Options{BaseURL: base})
			assert.ErrorIs(t, err, models.ErrSpec, "%s %s", spec, base)
		}
	}
	t.Setenv(ollama.EnvHost, "localhost:11434/v1")
	_, err := models.Open("ollama:tiny", models.Options{})
	assert.ErrorIs(t, err, models.ErrSpec)
	assert.ErrorContains(t, err, "OLLAMA_HOST: \"http://localhost:11434/v1\": ollama: wants the server root, http://localhost:11434")
}
