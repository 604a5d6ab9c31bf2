package models

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// DefaultOpenAIURL is openai:'s server when neither Options.BaseURL nor
// the environment names one.
const DefaultOpenAIURL = "https://api.openai.com/v1"

// The environment variables an openai: model reads.
const (
	EnvOpenAIKey     = "OPENAI_API_KEY"
	EnvOpenAIURL     = "OPENAI_BASE_URL" // OPENAI_API_BASE is read too, as langchaingo does
	envOpenAIAPIBase = "OPENAI_API_BASE"
)

// openAIProvider: OpenAI, or any OpenAI-compatible server (vLLM,
// llama.cpp, Ollama's /v1), at its API root.
var openAIProvider = &provider{
	name:        "openai",
	defaultURL:  DefaultOpenAIURL,
	urlVars:     []string{EnvOpenAIURL, envOpenAIAPIBase},
	example:     "http://127.0.0.1:11434/v1 or https://HOST/v1, the API root",
	keyVar:      EnvOpenAIKey,
	open:        openOpenAI,
	urlHint:     "--base-url or " + EnvOpenAIURL + " (the API root, usually ending in /v1, e.g. http://127.0.0.1:11434/v1 for Ollama)",
	authHint:    openAIAuthHint,
	notFound:    openAINotFound,
	nativeTools: true,
	listKey:     true,
	// OpenAI's list prices (openai.com/api/pricing), standard tier, no
	// batch discount, checked 2025-11-20, with its cached input: 90% off
	// for gpt-5 models, 75% for gpt-4.1, o3 and o4-mini, 50% for gpt-4o
	// and o3-mini; gpt-3.5-turbo has none.
	prices: map[string]maker.Price{
		"gpt-5":         {InputPerMillion: 1.25, OutputPerMillion: 10, CachedInputPerMillion: 0.125},
		"gpt-5-mini":    {InputPerMillion: 0.25, OutputPerMillion: 2, CachedInputPerMillion: 0.025},
		"gpt-5-nano":    {InputPerMillion: 0.05, OutputPerMillion: 0.40, CachedInputPerMillion: 0.005},
		"gpt-4.1":       {InputPerMillion: 2, OutputPerMillion: 8, CachedInputPerMillion: 0.5},
		"gpt-4.1-mini":  {InputPerMillion: 0.40, OutputPerMillion: 1.60, CachedInputPerMillion: 0.1},
		"gpt-4.1-nano":  {InputPerMillion: 0.10, OutputPerMillion: 0.40, CachedInputPerMillion: 0.025},
		"gpt-4o":        {InputPerMillion: 2.50, OutputPerMillion: 10, CachedInputPerMillion: 1.25},
		"gpt-4o-mini":   {InputPerMillion: 0.15, OutputPerMillion: 0.60, CachedInputPerMillion: 0.075},
		"o3":            {InputPerMillion: 2, OutputPerMillion: 8, CachedInputPerMillion: 0.5},
		"o3-mini":       {InputPerMillion: 1.10, OutputPerMillion: 4.40, CachedInputPerMillion: 0.55},
		"o4-mini":       {InputPerMillion: 1.10, OutputPerMillion: 4.40, CachedInputPerMillion: 0.275},
		"gpt-3.5-turbo": {InputPerMillion: 0.50, OutputPerMillion: 1.50},
	},
}

func openOpenAI(m *model, o Options, base string, client *http.Client) error {
	m.key, m.keySource = o.APIKey, cmp.Or(o.keyVar, "Options.APIKey")
	if m.key == "" {
		m.key, m.keySource = os.Getenv(EnvOpenAIKey), EnvOpenAIKey
	}
	official := base == DefaultOpenAIURL
	if m.key == "" {
		if official {
			return fmt.Errorf("%w: openai:%s at %s needs an API key: set %s, or give --base-url (or %s) for another OpenAI-compatible server", ErrSpec, m.spec.Name, base, EnvOpenAIKey, EnvOpenAIURL)
		}
		m.key, m.keySource = "placeholder", "placeholder"
	}
	opts := []openai.Option{openai.WithModel(m.spec.Name), openai.WithHTTPClient(client), openai.WithBaseURL(base), openai.WithToken(m.key)}
	if !official {
		// Local servers (llama.cpp, Ollama, older vLLM) read
		// max_tokens, not max_completion_tokens.
		m.extra = append(m.extra, openai.WithLegacyMaxTokensField())
	}
	llm, err := openai.New(opts...)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSpec, err)
	}
	m.llm, m.mapErr = llm, openai.MapError
	m.withSchema = func(rf *openai.ResponseFormat) (llms.Model, error) {
		return openai.New(append(opts, openai.WithResponseFormat(rf))...)
	}
	return nil
}

func openAIAuthHint(m *model) string {
	if m.keySource == "placeholder" {
		return "the server wants an API key: set " + EnvOpenAIKey
	}
	return m.refusedKey()
}

func openAINotFound(ctx context.Context, m *model, c seen, status string) *providerError {
	at, name := m.spec.String()+" at "+m.url, m.spec.Name
	if names, err := m.list(ctx, m.base+"/models", openAINames); err == nil {
		if !hasModel(names, name) {
			return permanent(ErrUnknownModel, "%s: the server has no model %q (%s); it serves %s: give one as --model openai:NAME", at, name, status, listed(names))
		}
		return permanent(ErrNotFound, "%s: %s from %s %s, though the server lists model %q", at, status, c.method, c.url, name)
	}
	if !strings.HasSuffix(m.url, "/v1") {
		if _, err := m.list(ctx, m.base+"/v1/models", openAINames); err == nil {
			return permanent(ErrNotFound, "%s: %s from %s %s: openai: wants the API root with its /v1: use --base-url %s/v1", at, status, c.method, c.url, m.url)
		}
	}
	return permanent(ErrNotFound, "%s: %s from %s %s: check the base URL: openai: wants the API root of an OpenAI-compatible server, usually ending in /v1 (Ollama: http://HOST:11434/v1); ollama: wants an Ollama server's root (http://HOST:11434)", at, status, c.method, c.url)
}
