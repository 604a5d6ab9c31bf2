// Package models turns a --model spec into an llms.Model: "sim" for the
// simulated model, "openai:MODEL", "ollama:MODEL" or "anthropic:MODEL",
// every provider through langchaingo.
package models

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// ErrSpec is wrapped by every error about a --model spec or its options.
var ErrSpec = errors.New("bad model spec")

// DefaultTimeout bounds one model call when Options.Timeout is zero.
// langchaingo's clients have no timeout of their own.
const DefaultTimeout = 2 * time.Minute

// Options are what Open needs beside the spec.
type Options struct {
	// BaseURL is the server for openai: (any OpenAI-compatible server:
	// vLLM, llama.cpp, Ollama's /v1) and ollama: specs.
	BaseURL string
	// APIKey overrides the key from the environment (OPENAI_API_KEY,
	// ANTHROPIC_API_KEY). An OpenAI-compatible server at BaseURL gets a
	// placeholder when there is none, since the client refuses an empty one.
	APIKey string
	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// Sim builds the simulated model for the spec "sim"; it depends on the
	// task, so the caller provides it.
	Sim func() (llms.Model, error)
}

// Specs lists the accepted spec forms, for help texts.
const Specs = "sim, openai:MODEL, ollama:MODEL or anthropic:MODEL"

// providers are the accepted providers of a spec.
var providers = []string{"openai", "ollama", "anthropic"}

// CheckSpec reports whether spec has an accepted form, without building
// anything: nil, or an error wrapping ErrSpec that says which forms are
// accepted.
func CheckSpec(spec string) error {
	if spec == "sim" {
		return nil
	}
	provider, name, ok := strings.Cut(spec, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: %q; use %s", ErrSpec, spec, Specs)
	}
	if !slices.Contains(providers, provider) {
		return fmt.Errorf("%w: unknown provider %q in %q; use %s", ErrSpec, provider, spec, Specs)
	}
	return nil
}

// Open returns the model named by spec. It makes no network call. Errors
// wrap ErrSpec and say which forms are accepted.
func Open(spec string, o Options) (llms.Model, error) {
	if err := CheckSpec(spec); err != nil {
		return nil, err
	}
	if spec == "sim" {
		if o.Sim == nil {
			return nil, fmt.Errorf("%w: the simulated model is not available for this command", ErrSpec)
		}
		return o.Sim()
	}
	provider, name, _ := strings.Cut(spec, ":")
	id := spec
	if o.BaseURL != "" {
		id += "@" + o.BaseURL
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	client := &http.Client{Timeout: timeout}
	switch provider {
	case "openai":
		key := firstNonEmpty(o.APIKey, os.Getenv("OPENAI_API_KEY"))
		opts := []openai.Option{openai.WithModel(name), openai.WithHTTPClient(client)}
		var extra []llms.CallOption
		if o.BaseURL != "" {
			opts = append(opts, openai.WithBaseURL(o.BaseURL))
			key = firstNonEmpty(key, "placeholder")
			// Local servers (llama.cpp, Ollama, older vLLM) read max_tokens,
			// not max_completion_tokens.
			extra = append(extra, openai.WithLegacyMaxTokensField())
		}
		if key == "" {
			return nil, fmt.Errorf("%w: openai needs OPENAI_API_KEY, or --base-url for a local server", ErrSpec)
		}
		m, err := openai.New(append(opts, openai.WithToken(key))...)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSpec, err)
		}
		return &wrapped{Model: m, id: id, extra: extra, mapErr: openai.MapError}, nil
	case "ollama":
		opts := []ollama.Option{ollama.WithModel(name), ollama.WithHTTPClient(client)}
		if o.BaseURL != "" {
			opts = append(opts, ollama.WithServerURL(o.BaseURL))
		}
		m, err := ollama.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSpec, err)
		}
		return &wrapped{Model: m, id: id}, nil
	case "anthropic":
		key := firstNonEmpty(o.APIKey, os.Getenv("ANTHROPIC_API_KEY"))
		if key == "" {
			return nil, fmt.Errorf("%w: anthropic needs ANTHROPIC_API_KEY", ErrSpec)
		}
		opts := []anthropic.Option{anthropic.WithModel(name), anthropic.WithToken(key), anthropic.WithHTTPClient(client)}
		if o.BaseURL != "" {
			opts = append(opts, anthropic.WithBaseURL(o.BaseURL))
		}
		m, err := anthropic.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSpec, err)
		}
		return &wrapped{Model: m, id: id}, nil
	}
	return nil, fmt.Errorf("%w: unknown provider %q in %q; use %s", ErrSpec, provider, spec, Specs)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// wrapped adds call options and maps a provider's errors, so that
// llms.IsRateLimitError and friends recognise them.
type wrapped struct {
	llms.Model
	id     string
	extra  []llms.CallOption
	mapErr func(error) error
}

// Identity is the spec and the base URL: what the journal compares on
// resume. It holds no key.
func (p *wrapped) Identity() string { return p.id }

func (p *wrapped) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := p.Model.GenerateContent(ctx, msgs, append(opts, p.extra...)...)
	if err != nil && p.mapErr != nil {
		err = p.mapErr(err)
	}
	return resp, err
}
