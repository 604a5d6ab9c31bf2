package models

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"github.com/mdap-go/mdap/maker"
)

// provider is all that differs between model providers. A provider is a
// file of its own (openai.go, ollama.go, anthropic.go) declaring one,
// listed in providers; the rest of the package asks it and names none.
type provider struct {
	name string
	// defaultURL is its public server, when neither Options nor the
	// environment names one.
	defaultURL string
	// urlVars are the environment variables that name its server, the
	// first one set winning; readURLVar reads their value (nil: as is).
	urlVars    []string
	readURLVar func(string) (string, error)
	// example is the URL form it wants, for messages; wrongURL, when not
	// nil, refuses a URL of another provider's convention with the reason.
	example  string
	wrongURL func(u *url.URL, shown string) error
	// apiRoot, when not nil, is the URL its client takes from the checked
	// base URL (the identity a journal keeps is that URL too).
	apiRoot func(base string) string
	// keyVar is the environment variable of its API key; "" when it sends
	// none.
	keyVar string
	// open builds its langchaingo client into m (m.llm, m.mapErr, and
	// anything else it needs), with o's key; errors wrap ErrSpec.
	open func(m *model, o Options, base string, client *http.Client) error
	// urlHint says where its server is set; authHint what to fix when the
	// server refuses the credentials.
	urlHint  string
	authHint func(m *model) string
	// notFound says what a 404 meant, when the provider can tell (nil:
	// check the model name).
	notFound func(ctx context.Context, m *model, c seen, status string) *providerError
	// nativeTools: it takes tool definitions natively (model.NativeTools).
	nativeTools bool
	// ollamaStream: its replies are Ollama's /api/chat stream, which the
	// transport reads (transport.ollama).
	ollamaStream bool
	// listKey: its model lists want the API key (a diagnostic GET).
	listKey bool
	// prices are its list prices at its own API (BuiltinPrice).
	prices map[string]maker.Price
}

// SecretVars are the environment variables whose values a model Open
// returns may send to its server: each provider's API key variable
// (keys), and the variables that name its server (urls: a URL's user
// information may hold a password), in the order of Providers. Package
// maker/models/credentials reads them to list a run's secrets. Cost: a
// copy of the names.
func SecretVars() (keys, urls []string) {
	for _, p := range providers {
		if p.keyVar != "" {
			keys = append(keys, p.keyVar)
		}
		urls = append(urls, p.urlVars...)
	}
	return keys, urls
}

// providers are the providers a spec may name, in the order help texts
// list them.
var providers = []*provider{openAIProvider, ollamaProvider, anthropicProvider}

// providerNamed returns the provider called name, or nil.
func providerNamed(name string) *provider {
	i := slices.IndexFunc(providers, func(p *provider) bool { return p.name == name })
	if i < 0 {
		return nil
	}
	return providers[i]
}

// Providers lists the providers a spec may name ("openai", "ollama",
// "anthropic"), in the order help texts list them; "sim" is not one.
func Providers() []string {
	out := make([]string, len(providers))
	for i, p := range providers {
		out[i] = p.name
	}
	return out
}
