package models

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
)

// DefaultOllamaURL is ollama:'s server when neither Options.BaseURL nor
// the environment names one.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// EnvOllamaHost names ollama:'s server: HOST[:PORT] or a URL, as the
// ollama command reads it.
const EnvOllamaHost = "OLLAMA_HOST"

// ollamaProvider: Ollama's native API, at the server's root. Its client
// drops tool definitions, so its models are told of their tools in the
// prompt (openai: on Ollama's /v1 takes them natively).
var ollamaProvider = &provider{
	name:         "ollama",
	defaultURL:   DefaultOllamaURL,
	urlVars:      []string{EnvOllamaHost},
	readURLVar:   ollamaHost,
	example:      "http://127.0.0.1:11434, the Ollama server's root",
	wrongURL:     ollamaWrongURL,
	open:         openOllama,
	urlHint:      "--base-url or " + EnvOllamaHost + " (the Ollama server's root, e.g. " + DefaultOllamaURL + "; start it with `ollama serve`)",
	authHint:     func(*model) string { return ollamaAuthHint },
	notFound:     ollamaNotFound,
	ollamaStream: true,
}

const ollamaAuthHint = "ollama: sends no credentials; reach the server without authentication, or use openai:NAME on its /v1 URL with " + EnvOpenAIKey

// ollamaMapper gives Ollama's errors langchaingo's kinds.
var ollamaMapper = llms.NewErrorMapper("ollama").Map

func openOllama(m *model, _ Options, base string, client *http.Client) error {
	llm, err := ollama.New(ollama.WithModel(m.spec.Name), ollama.WithHTTPClient(client), ollama.WithServerURL(base))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSpec, err)
	}
	m.llm, m.mapErr = llm, ollamaMapper
	return nil
}

// ollamaHost reads OLLAMA_HOST as the ollama command does: a URL, or
// HOST[:PORT] with the scheme http and the port 11434 by default.
func ollamaHost(v string) (string, error) {
	scheme, hostport, ok := strings.Cut(v, "://")
	defaultPort := "11434"
	switch {
	case !ok:
		scheme, hostport = "http", v
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), defaultPort
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return u.String(), nil
}

// ollamaWrongURL refuses a URL ending in /v1 or /api: that is the
// OpenAI-compatible path (for openai:) or an endpoint, and ollama: wants
// the server root.
func ollamaWrongURL(u *url.URL, shown string) error {
	path := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(path, "/v1") && !strings.HasSuffix(path, "/api") && !strings.Contains(path, "/api/") {
		return nil
	}
	root := *u
	root.Path = strings.TrimSuffix(strings.TrimSuffix(path, "/v1"), "/api")
	if i := strings.Index(root.Path, "/api/"); i >= 0 {
		root.Path = root.Path[:i]
	}
	root.User = nil
	return badURL("%q: ollama: wants the server root, %s (a URL ending in /v1 is the OpenAI-compatible API, for --model openai:NAME)", shown, root.String())
}

func ollamaNotFound(ctx context.Context, m *model, c seen, status string) *providerError {
	at, name := m.spec.String()+" at "+m.url, m.spec.Name
	if names, err := m.list(ctx, m.base+"/api/tags", ollamaNames); err == nil {
		if !hasModel(names, name) {
			return permanent(ErrUnknownModel, "%s: the Ollama server has no model %q (%s); it has %s: give one as --model ollama:NAME, or add it (ollama pull NAME, ollama create NAME -f Modelfile)", at, name, status, listed(names))
		}
		return permanent(ErrNotFound, "%s: %s from %s %s, though the server lists model %q", at, status, c.method, c.url, name)
	}
	if _, err := m.list(ctx, m.base+"/v1/models", openAINames); err == nil {
		return permanent(ErrNotFound, "%s: %s from %s %s: this is not an Ollama server's root (no /api/tags) but an OpenAI-compatible API (%s/v1): use --model openai:%s --base-url %s/v1", at, status, c.method, c.url, m.url, name, m.url)
	}
	return permanent(ErrNotFound, "%s: %s from %s %s: ollama: wants an Ollama server's root (http://HOST:11434, as OLLAMA_HOST names it); for an OpenAI-compatible server use --model openai:NAME with its /v1 URL", at, status, c.method, c.url)
}
