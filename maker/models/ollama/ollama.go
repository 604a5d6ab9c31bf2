// Package ollama registers the ollama: provider of maker/models:
// Ollama's native API, at the server's root, through langchaingo's
// Ollama client (maker/models reads its reply stream's final line). Its
// client drops tool definitions, so its models are told of their tools
// in the prompt (openai: on Ollama's /v1 takes them natively). Import it
// for its effect:
//
//	import _ "github.com/mdap-go/mdap/maker/models/ollama"
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/openai"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
)

// DefaultURL is ollama:'s server when neither models.Options.BaseURL
// nor the environment names one.
const DefaultURL = "http://127.0.0.1:11434"

// EnvHost names ollama:'s server: HOST[:PORT] or a URL, as the ollama
// command reads it.
const EnvHost = "OLLAMA_HOST"

func init() { models.Register(provider) }

var provider = &models.Provider{
	Name:       "ollama",
	DefaultURL: DefaultURL,
	URLVars:    []string{EnvHost},
	ReadURLVar: hostVar,
	Example:    "http://127.0.0.1:11434, the Ollama server's root",
	WrongURL:   wrongURL,
	Open:       open,
	URLHint:    "--base-url or " + EnvHost + " (the Ollama server's root, e.g. " + DefaultURL + "; start it with `ollama serve`)",
	AuthHint:   func(*models.Conn) string { return authHint },
	NotFound:   notFound,
	Stream:     newStream,
}

const authHint = "ollama: sends no credentials; reach the server without authentication, or use openai:NAME on its /v1 URL with " + openai.EnvKey

// mapper gives Ollama's errors langchaingo's kinds.
var mapper = llms.NewErrorMapper("ollama").Map

func open(c *models.Conn) error {
	llm, err := ollama.New(ollama.WithModel(c.Spec.Name), ollama.WithHTTPClient(c.HTTP), ollama.WithServerURL(c.Base))
	if err != nil {
		return fmt.Errorf("%w: %w", models.ErrSpec, err)
	}
	c.LLM, c.MapErr = llm, mapper
	return nil
}

// hostVar reads OLLAMA_HOST as the ollama command does: a URL, or
// HOST[:PORT] with the scheme http and the port 11434 by default.
func hostVar(v string) (string, error) {
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

// wrongURL refuses a URL ending in /v1 or /api: that is the
// OpenAI-compatible path (for openai:) or an endpoint, and ollama: wants
// the server root.
func wrongURL(u *url.URL, shown string) error {
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
	return models.BadURL("%q: ollama: wants the server root, %s (a URL ending in /v1 is the OpenAI-compatible API, for --model openai:NAME)", shown, root.String())
}

func notFound(ctx context.Context, c *models.Conn, request, status string) error {
	at, name := c.Spec.String()+" at "+c.URL, c.Spec.Name
	if names, err := openai.List(ctx, c, c.Base+"/api/tags", ModelNames); err == nil {
		if !openai.HasModel(names, name) {
			return models.Permanent(models.ErrUnknownModel, "%s: the Ollama server has no model %q (%s); it has %s: give one as --model ollama:NAME, or add it (ollama pull NAME, ollama create NAME -f Modelfile)", at, name, status, openai.Listed(names))
		}
		return models.Permanent(models.ErrNotFound, "%s: %s from %s, though the server lists model %q", at, status, request, name)
	}
	if _, err := openai.List(ctx, c, c.Base+"/v1/models", openai.ModelNames); err == nil {
		return models.Permanent(models.ErrNotFound, "%s: %s from %s: this is not an Ollama server's root (no /api/tags) but an OpenAI-compatible API (%s/v1): use --model openai:%s --base-url %s/v1", at, status, request, c.URL, name, c.URL)
	}
	return models.Permanent(models.ErrNotFound, "%s: %s from %s: ollama: wants an Ollama server's root (http://HOST:11434, as OLLAMA_HOST names it); for an OpenAI-compatible server use --model openai:NAME with its /v1 URL", at, status, request)
}

// ModelNames reads an Ollama server's model list (GET /api/tags:
// {"models":[{"name":...}]}) for openai.List; an error when the
// body is not one.
func ModelNames(b []byte) ([]string, error) {
	var v struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Models == nil {
		return nil, errors.New("not a model list")
	}
	names := make([]string, 0, len(v.Models))
	for _, d := range v.Models {
		names = append(names, d.Name)
	}
	return names, nil
}
