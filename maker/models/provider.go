package models

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// Provider is all that differs between model providers. Each lives in a
// package of its own (maker/models/openai, maker/models/ollama,
// maker/models/anthropic) that registers it when imported, as a
// database/sql driver does; maker/models/all imports every one. The rest
// of this package asks the Provider and names none.
type Provider struct {
	// Name is what a spec writes before its colon ("openai").
	Name string
	// DefaultURL is its public server, when neither Options nor the
	// environment names one.
	DefaultURL string
	// URLVars are the environment variables that name its server, the
	// first one set winning; ReadURLVar reads their value (nil: as is).
	URLVars    []string
	ReadURLVar func(string) (string, error)
	// Example is the URL form it wants, for messages; WrongURL, when not
	// nil, refuses a URL of another provider's convention with the
	// reason (BadURL).
	Example  string
	WrongURL func(u *url.URL, shown string) error
	// APIRoot, when not nil, is the URL its client takes from the checked
	// base URL (the identity a journal keeps is that URL too).
	APIRoot func(base string) string
	// KeyVar is the environment variable of its API key; "" when it sends
	// none. Open reads the key (Options.APIKey, a spec's ;key=VAR, else
	// KeyVar) into Conn.Key before Provider.Open.
	KeyVar string
	// Open builds its langchaingo client over c.HTTP into c (c.LLM,
	// c.MapErr, and any other field it sets); errors wrap ErrSpec.
	Open func(c *Conn) error
	// URLHint says where its server is set; AuthHint what to fix when the
	// server refuses the credentials.
	URLHint  string
	AuthHint func(c *Conn) string
	// NotFound says what a 404 of request ("METHOD URL") meant, when the
	// provider can tell (nil: check the model name); it returns an error
	// of Permanent.
	NotFound func(ctx context.Context, c *Conn, request, status string) error
	// NativeTools: it takes tool definitions natively (Spec.NativeTools).
	NativeTools bool
	// Stream, when not nil, is asked of each request of a call: it may
	// rewrite the request, and returns the Stream a successful reply is
	// read through, or nil for a reply that is not streamed (Ollama's
	// /api/chat is).
	Stream func(c *Conn, req *http.Request) (*http.Request, Stream, error)
	// Prices are its list prices at its own API (BuiltinPrice).
	Prices map[string]maker.Price
}

// Conn is a model Open is building, as its Provider sees it: what Open
// set before Provider.Open, and what Provider.Open fills in.
type Conn struct {
	// Spec is the model's spec; Base the server's URL as given (a
	// proxy's user:password@ included), for requests only; URL the same
	// without its user information, for whatever is shown.
	Spec      Spec
	Base, URL string
	// HTTP is the client the provider's langchaingo client must use: it
	// carries the timeout and the transport that sees each call. Timeout
	// bounds each call.
	HTTP    *http.Client
	Timeout time.Duration
	// Key is the API key (never shown) and KeySource where it came from,
	// for messages: "Options.APIKey", a spec's ;key=VAR, or KeyVar. The
	// provider may set a placeholder ("placeholder") where a server
	// needs none.
	Key, KeySource string
	// LLM is the provider's client; MapErr gives its errors
	// langchaingo's kinds; Extra are options added to every call.
	LLM    llms.Model
	MapErr func(error) error
	Extra  []llms.CallOption
	// WithSchema, when not nil, builds a client that sends an answer
	// schema (maker.AnswerSchemaFrom) as structured output; an error
	// leaves the call to the plain client. Each schema's client is kept.
	WithSchema func(schema []byte) (llms.Model, error)
	// Layout, when not nil, rewrites a call's messages before they are
	// sent (Anthropic's prompt cache markers).
	Layout func([]llms.MessageContent) []llms.MessageContent
}

// String names the connection by its spec and its URL without user
// information, and where its key came from: never the key or Base, so a
// Conn in a log line or a %+v print leaks no secret. (A Conn in an
// unexported field of another struct is printed field by field, its key
// too: fmt cannot call its methods there.)
func (c Conn) String() string {
	return fmt.Sprintf("models.Conn{%s at %q, key from %q}", c.Spec, c.URL, c.KeySource)
}

// Format prints String for every verb (%d, %#v and the rest too), so
// that no verb prints the fields.
func (c Conn) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// RefusedKey says where the refused key came from and where to fix it:
// the variable it was read from (the provider's, or a spec's ;key=VAR).
func (c *Conn) RefusedKey() string {
	if c.KeySource == "Options.APIKey" {
		return "the server refused the API key given in Options.APIKey: give a valid key"
	}
	return "the server refused the API key from " + c.KeySource + ": set " + c.KeySource + " to a valid key"
}

// builtin are the providers of mdap's own packages, in the order help
// texts list them: an unregistered one's error names its package.
var builtin = []string{"openai", "ollama", "anthropic"}

var (
	registryMu sync.RWMutex
	registry   = map[string]*Provider{}
)

// Register makes p a provider a spec may name. Provider packages call it
// from their init. It panics on a second provider of the same name or
// one without a Name or Open, as sql.Register does: a programming error.
func Register(p *Provider) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if p == nil || p.Name == "" || p.Open == nil || p.Name == "sim" {
		panic("models: Register of a provider without a name or Open, or named sim")
	}
	if _, dup := registry[p.Name]; dup {
		panic("models: Register called twice for provider " + p.Name)
	}
	registry[p.Name] = p
}

// providerNamed returns the provider called name, or nil.
func providerNamed(name string) *Provider {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return registry[name]
}

// unregistered is the error of a spec naming a provider no package
// registered: for one of mdap's own, it names the package to import.
func unregistered(name, spec string) error {
	if slices.Contains(builtin, name) {
		return fmt.Errorf("%w: provider %q of %q is not registered: import _ %q (or maker/models/all for every provider)", ErrSpec, name, spec, "github.com/mdap-go/mdap/maker/models/"+name)
	}
	return fmt.Errorf("%w: unknown provider %q in %q; use %s", ErrSpec, name, spec, Specs)
}

// registered returns the registered providers, mdap's own first in the
// order help texts list them, then the others by name.
func registered() []*Provider {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := slices.Collect(maps.Values(registry))
	rank := func(p *Provider) int {
		if i := slices.Index(builtin, p.Name); i >= 0 {
			return i
		}
		return len(builtin)
	}
	slices.SortFunc(out, func(a, b *Provider) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Name, b.Name)) })
	return out
}

// SecretVars are the environment variables whose values a model Open
// returns may send to its server: each registered provider's API key
// variable (keys), and the variables that name its server (urls: a
// URL's user information may hold a password), in the order of
// Providers. Package maker/models/credentials reads them to list a run's
// secrets. Cost: a copy of the names.
func SecretVars() (keys, urls []string) {
	for _, p := range registered() {
		if p.KeyVar != "" {
			keys = append(keys, p.KeyVar)
		}
		urls = append(urls, p.URLVars...)
	}
	return keys, urls
}

// Providers lists the registered providers a spec may name ("openai",
// "ollama", "anthropic" with maker/models/all), in the order help texts
// list them; "sim" is not one.
func Providers() []string {
	ps := registered()
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}
