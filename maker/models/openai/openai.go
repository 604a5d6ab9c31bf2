// Package openai registers the openai: provider of maker/models: OpenAI,
// or any OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1), at its
// API root, through langchaingo's OpenAI client, with structured output
// (schema.go). Import it for its effect, as a database/sql driver is:
//
//	import _ "github.com/mdap-go/mdap/maker/models/openai"
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// DefaultURL is openai:'s server when neither models.Options.BaseURL
// nor the environment names one.
const DefaultURL = "https://api.openai.com/v1"

// The environment variables an openai: model reads.
const (
	EnvKey     = "OPENAI_API_KEY"
	EnvURL     = "OPENAI_BASE_URL" // OPENAI_API_BASE is read too, as langchaingo does
	envAPIBase = "OPENAI_API_BASE"
)

func init() { models.Register(provider) }

var provider = &models.Provider{
	Name:        "openai",
	DefaultURL:  DefaultURL,
	URLVars:     []string{EnvURL, envAPIBase},
	Example:     "http://127.0.0.1:11434/v1 or https://HOST/v1, the API root",
	KeyVar:      EnvKey,
	Open:        open,
	URLHint:     "--base-url or " + EnvURL + " (the API root, usually ending in /v1, e.g. http://127.0.0.1:11434/v1 for Ollama)",
	AuthHint:    authHint,
	NotFound:    notFound,
	NativeTools: true,
	// OpenAI's list prices (openai.com/api/pricing), standard tier, no
	// batch discount, checked 2025-11-20, with its cached input: 90% off
	// for gpt-5 models, 75% for gpt-4.1, o3 and o4-mini, 50% for gpt-4o
	// and o3-mini; gpt-3.5-turbo has none.
	Prices: map[string]maker.Price{
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

func open(c *models.Conn) error {
	official := c.Base == DefaultURL
	if c.Key == "" {
		if official {
			return fmt.Errorf("%w: openai:%s at %s needs an API key: set %s, or give --base-url (or %s) for another OpenAI-compatible server", models.ErrSpec, c.Spec.Name, c.Base, EnvKey, EnvURL)
		}
		c.Key, c.KeySource = "placeholder", "placeholder"
	}
	opts := []openai.Option{openai.WithModel(c.Spec.Name), openai.WithHTTPClient(c.HTTP), openai.WithBaseURL(c.Base), openai.WithToken(c.Key)}
	if !official {
		// Local servers (llama.cpp, Ollama, older vLLM) read
		// max_tokens, not max_completion_tokens.
		c.Extra = append(c.Extra, openai.WithLegacyMaxTokensField())
	}
	llm, err := openai.New(opts...)
	if err != nil {
		return fmt.Errorf("%w: %w", models.ErrSpec, err)
	}
	c.LLM, c.MapErr = llm, openai.MapError
	c.WithSchema = func(schema []byte) (llms.Model, error) {
		rf, err := responseFormat(schema)
		if err != nil {
			return nil, err
		}
		return openai.New(append(opts, openai.WithResponseFormat(rf))...)
	}
	return nil
}

func authHint(c *models.Conn) string {
	if c.KeySource == "placeholder" {
		return "the server wants an API key: set " + EnvKey
	}
	return c.RefusedKey()
}

func notFound(ctx context.Context, c *models.Conn, request, status string) error {
	at, name := c.Spec.String()+" at "+c.URL, c.Spec.Name
	if names, err := List(ctx, c, c.Base+"/models", ModelNames); err == nil {
		if !HasModel(names, name) {
			return models.Permanent(models.ErrUnknownModel, "%s: the server has no model %q (%s); it serves %s: give one as --model openai:NAME", at, name, status, Listed(names))
		}
		return models.Permanent(models.ErrNotFound, "%s: %s from %s, though the server lists model %q", at, status, request, name)
	}
	if !strings.HasSuffix(c.URL, "/v1") {
		if _, err := List(ctx, c, c.Base+"/v1/models", ModelNames); err == nil {
			return models.Permanent(models.ErrNotFound, "%s: %s from %s: openai: wants the API root with its /v1: use --base-url %s/v1", at, status, request, c.URL)
		}
	}
	return models.Permanent(models.ErrNotFound, "%s: %s from %s: check the base URL: openai: wants the API root of an OpenAI-compatible server, usually ending in /v1 (Ollama: http://HOST:11434/v1); ollama: wants an Ollama server's root (http://HOST:11434)", at, status, request)
}

// List fetches the model list at u with a plain GET (c's key, when it
// has one, as a bearer token) and reads it with parse, for a 404's
// diagnosis only: the calls themselves go through langchaingo, and this
// GET through a client of its own, not c.HTTP, whose transport records
// the call being diagnosed. It waits at most 5 seconds and reads at most
// 1 MiB; errors: the request's, a status other than 200, or parse's.
func List(ctx context.Context, c *models.Conn, u string, parse func([]byte) ([]string, error)) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	return parse(b)
}

// ModelNames reads an OpenAI-compatible server's model list (GET
// /v1/models: {"data":[{"id":...}]}) for List; an error when
// the body is not one.
func ModelNames(b []byte) ([]string, error) {
	var v struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Data == nil {
		return nil, errors.New("not a model list")
	}
	names := make([]string, 0, len(v.Data))
	for _, d := range v.Data {
		names = append(names, d.ID)
	}
	return names, nil
}

// maxListed bounds the model names an error lists.
const maxListed = 20

// Listed names a server's models for a message, sorted, at most
// maxListed of them ("no models" for none). It sorts names in place.
func Listed(names []string) string {
	if len(names) == 0 {
		return "no models"
	}
	slices.Sort(names)
	if len(names) > maxListed {
		return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return strings.Join(names, ", ")
}

// HasModel reports whether names holds name, taking Ollama's default
// tag into account ("tiny" is "tiny:latest").
func HasModel(names []string, name string) bool {
	for _, n := range names {
		if n == name || n == name+":latest" || strings.TrimSuffix(n, ":latest") == name {
			return true
		}
	}
	return false
}
