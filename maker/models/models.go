// Package models turns a --model spec into an llms.Model: "sim" for the
// simulated model, "openai:MODEL" (OpenAI or any OpenAI-compatible server:
// vLLM, llama.cpp, Ollama's /v1), "ollama:MODEL" (Ollama's native API) or
// "anthropic:MODEL", every provider through langchaingo. A spec may carry
// its price: "openai:gpt-4o-mini=0.15/0.60".
//
// Each provider is a package of its own that registers a Provider when
// imported (maker/models/openai, maker/models/ollama,
// maker/models/anthropic; maker/models/all imports every one), as a
// database/sql driver does: a program imports the ones it opens, and a
// spec naming a provider it did not import is an ErrSpec that names the
// package to import.
//
// The models Open returns add what a long voted run needs and
// langchaingo's clients lack: a timeout per call; errors that name the
// model and the server's URL and say what to fix, with the permanent ones
// (unknown model, refused key, no server) marked maker.ErrPermanent so the
// solver stops at once; a rate limit that carries the server's
// Retry-After, which the solver waits;
// Ollama's stop reason (done_reason) and its reply streams cut short,
// which langchaingo's Ollama client drops; structured output (see
// maker.Solver.Structured); and a price (maker.Priced).
package models

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/sourcegraph/conc/panics"
	"github.com/tmc/langchaingo/llms"
)

// DefaultTimeout bounds one model call when Options.Timeout is zero.
// langchaingo's clients have no timeout of their own.
const DefaultTimeout = 2 * time.Minute

// DefaultMaxRetryWait is the longest pause a rate-limited server may ask
// for when Options.MaxRetryWait is zero: maker.MaxRetryAfter, the longest
// a sample waits.
const DefaultMaxRetryWait = maker.MaxRetryAfter

// DefaultIdleConns is the idle connections a model keeps to its server
// when Options.MaxInFlight is zero.
const DefaultIdleConns = 64

// Options are what Open needs beside the spec.
type Options struct {
	// BaseURL is the server. Empty means the provider's environment
	// variable, else its public default (see BaseURL, which says what form
	// each provider wants).
	BaseURL string
	// APIKey overrides the key from the environment (OPENAI_API_KEY,
	// ANTHROPIC_API_KEY). An openai: model on a server other than
	// OpenAI's gets a placeholder when there is none, since the client
	// refuses an empty one and a local server needs none.
	APIKey string
	// keyVar is the environment variable a spec's ;key=VAR read APIKey
	// from (SplitEndpoint), for messages.
	keyVar string
	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxRetryWait is the longest pause a rate-limited server may ask for
	// (Retry-After); a longer one fails the call as permanent (try again
	// later). Zero means DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// InputPrice and OutputPrice, when not nil, price every model whose
	// spec gives no price (dollars per million tokens), over the built-in
	// table (BuiltinPrice).
	InputPrice, OutputPrice *float64
	// MaxInFlight is the most calls the caller will have in flight at
	// once (maker solve's --max-inflight): the connection pool keeps up
	// to that many idle connections to the server, so no call opens a
	// new one in a steady run. Zero means DefaultIdleConns.
	MaxInFlight int
	// ModelRPM, when positive, is the most calls started per minute to
	// each model Open returns, evenly spaced 60/ModelRPM seconds apart
	// (a token bucket of one); a spec's ";rpm=N" sets it for its model.
	// A call waiting for its turn has sent nothing. Zero: no bound.
	ModelRPM float64
	// ModelInFlight, when positive, is the most calls in flight at once
	// to each model Open returns; a spec's ";inflight=N" sets it for its
	// model. Zero: no bound. The sim model takes neither.
	ModelInFlight int
	// Sim builds the simulated model for the spec "sim"; it depends on the
	// task, so the caller provides it.
	Sim func() (llms.Model, error)
}

// Open returns the model named by spec. It makes no network call. The
// model is safe for concurrent use, implements maker.Identifier (the
// spec and the server's URL, never a key) and maker.Priced (the spec's
// price, else Options' prices, else BuiltinPrice for a model at OpenAI's
// or Anthropic's own API, else zero), and returns the errors described
// at ErrUnreachable and the other kinds.
//
// Environment: OPENAI_API_KEY, OPENAI_BASE_URL (or OPENAI_API_BASE),
// OLLAMA_HOST, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, each read only when
// Options does not say (see BaseURL). Errors wrap ErrSpec: a bad spec, a
// base URL no client could use (never the process exit langchaingo's
// Ollama client makes of one), a missing key for OpenAI's or Anthropic's
// own API.
func Open(spec string, o Options) (llms.Model, error) {
	spec, o, err := SplitEndpoint(spec, o)
	if err != nil {
		return nil, err
	}
	sp, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	if sp.Provider == "sim" {
		if o.ModelRPM > 0 || o.ModelInFlight > 0 {
			return nil, fmt.Errorf("%w: %q: rpm= and inflight= limit a served model; the simulated model has no server to protect", ErrSpec, spec)
		}
		if o.Sim == nil {
			return nil, fmt.Errorf("%w: the simulated model is not available for this command", ErrSpec)
		}
		return o.Sim()
	}
	p := providerNamed(sp.Provider)
	if p == nil {
		return nil, unregistered(sp.Provider, spec)
	}
	base, source, err := BaseURL(sp.Provider, o.BaseURL)
	if err != nil {
		return nil, err
	}
	if p.APIRoot != nil {
		base = p.APIRoot(base) // so every form of its URL has one identity
	}
	m := &model{
		Conn:     Conn{Spec: sp, Base: base, URL: ShownURL(base), Timeout: cmp.Or(max(o.Timeout, 0), DefaultTimeout)},
		provider: p, maxRetryWait: cmp.Or(max(o.MaxRetryWait, 0), DefaultMaxRetryWait),
		schemaClients: map[string]llms.Model{},
	}
	m.price = m.priceFrom(o, source)
	pool := http.DefaultTransport.(*http.Transport).Clone()
	pool.MaxIdleConnsPerHost = cmp.Or(max(o.MaxInFlight, 0), DefaultIdleConns) // a step draws k samples at once
	m.limit = newModelLimit(o.ModelRPM, o.ModelInFlight)
	if o.ModelInFlight > 0 && (o.MaxInFlight == 0 || o.ModelInFlight < o.MaxInFlight) {
		pool.MaxIdleConnsPerHost = o.ModelInFlight
	}
	pool.MaxIdleConns = max(pool.MaxIdleConns, pool.MaxIdleConnsPerHost)
	m.HTTP = &http.Client{Timeout: m.Timeout, Transport: &transport{base: pool, conn: &m.Conn, stream: p.Stream}}
	if p.KeyVar != "" {
		m.Key, m.KeySource = o.APIKey, cmp.Or(o.keyVar, "Options.APIKey")
		if m.Key == "" {
			m.Key, m.KeySource = os.Getenv(p.KeyVar), p.KeyVar
		}
	}
	if err := p.Open(&m.Conn); err != nil {
		return nil, err
	}
	return m, nil
}

// ShownURL is raw without its user information (user:password@), for
// whatever is shown or kept: the password is a credential, the user name
// often one too. A raw that does not parse as a URL (a password with a
// character a URL may not hold, say) loses everything from its scheme's
// "//" up to its host's last "@" all the same, so no text is shown that
// could hold a credential. It refuses nothing.
func ShownURL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil {
		if u.User == nil {
			return raw
		}
		u.User = nil
		return u.String()
	}
	start := strings.Index(raw, "//") + 2
	if start < 2 {
		start = 0
	}
	end := len(raw)
	if slash := strings.IndexAny(raw[start:], "/?#"); slash >= 0 {
		end = start + slash
	}
	if at := strings.LastIndex(raw[start:end], "@"); at >= 0 {
		return raw[:start] + raw[start+at+1:]
	}
	return raw
}

// priceFrom resolves the model's price: the spec's, else the options',
// over the built-in table for a model at its provider's own API.
func (m *model) priceFrom(o Options, source string) maker.Price {
	if m.Spec.Price != nil {
		return *m.Spec.Price
	}
	var p maker.Price
	if source == "the default" {
		p, _ = BuiltinPrice(m.Spec.Provider, m.Spec.Name)
	}
	if o.InputPrice != nil {
		// The table's cache prices are fractions of its input price:
		// another input price drops them (cached input then costs input).
		p.InputPerMillion = *o.InputPrice
		p.CachedInputPerMillion, p.CacheWritePerMillion = 0, 0
	}
	if o.OutputPrice != nil {
		p.OutputPerMillion = *o.OutputPrice
	}
	return p
}

// model is a langchaingo model with the additions of the package doc.
type model struct {
	Conn         // the spec, the server, the key and the provider's client
	provider     *Provider
	price        maker.Price
	maxRetryWait time.Duration
	limit        *modelLimit // this model's own rpm= and inflight=; nil: none

	mu            sync.Mutex
	schemaClients map[string]llms.Model // Conn.WithSchema's, by schema
}

var (
	_ llms.Model       = (*model)(nil)
	_ maker.Identifier = (*model)(nil)
	_ maker.Priced     = (*model)(nil)
)

// Identity is the spec (without its price) and the server's URL without
// its userinfo: what the journal compares on resume. It holds no key and
// no password (http://user:PASSWORD@host/v1 is shown http://host/v1).
func (m *model) Identity() string { return m.Spec.String() + "@" + m.URL }

// Price implements maker.Priced.
func (m *model) Price() maker.Price { return m.price }

// Call implements llms.Model's single-prompt method.
func (m *model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// GenerateContent makes the call through langchaingo and checks what the
// transport saw of it: see the package doc.
func (m *model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	llm := m.LLM
	schema, structured := maker.AnswerSchemaFrom(ctx)
	if structured && m.WithSchema != nil {
		llm = m.structured(schema)
	}
	release, err := m.limit.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: waiting for its turn (%s): %w", m.Spec, m.URL, m.limit, err)
	}
	defer release()
	if m.Layout != nil {
		msgs = m.Layout(msgs)
	}
	callCtx, c := withCall(ctx)
	start := time.Now()
	resp, err := m.send(callCtx, llm, msgs, opts)
	took := time.Since(start)
	seen := c.snapshot()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s at %s: %w", m.Spec, m.URL, context.Cause(ctx))
	}
	if seen.stream != nil && seen.status < 400 {
		if err := seen.stream.Check(resp, err, took); err != nil {
			return nil, err
		}
	}
	if err == nil && seen.status >= 400 {
		// langchaingo's Ollama client takes an error status with an
		// empty body for an empty reply.
		err = fmt.Errorf("HTTP %d", seen.status)
	}
	if err != nil {
		return nil, m.classify(ctx, seen, err, took)
	}
	if id, model := responseMeta(seen.head); resp != nil && (id != "" || model != "") {
		for _, ch := range resp.Choices {
			if ch == nil {
				continue
			}
			if ch.GenerationInfo == nil {
				ch.GenerationInfo = map[string]any{}
			}
			ch.GenerationInfo[maker.InfoResponseID], ch.GenerationInfo[maker.InfoResponseModel] = id, model
		}
	}
	return resp, nil
}

// errClientPanic: the provider's client panicked on a reply. Its text
// holds a stack, whose addresses the providers' error mappers would read
// as status codes (a "429" in a program counter is no rate limit), so it
// is never mapped.
var errClientPanic = errors.New("the client could not read the reply")

// send makes the call through llm with the model's extra options. A
// panic in the client (langchaingo's OpenAI client panics on some
// replies, {"choices":[null]} among them) is returned as an error that
// says so, never raised in the caller.
func (m *model) send(ctx context.Context, llm llms.Model, msgs []llms.MessageContent, opts []llms.CallOption) (resp *llms.ContentResponse, err error) {
	opts = append(opts[:len(opts):len(opts)], m.Extra...)
	if rec := panics.Try(func() { resp, err = llm.GenerateContent(ctx, msgs, opts...) }); rec != nil {
		return nil, fmt.Errorf("%w: %w", errClientPanic, rec.AsError())
	}
	return resp, err
}

// structured returns the client Conn.WithSchema builds for schema, or
// the plain client when it cannot carry it (the call's llms.WithJSONMode
// then asks for JSON).
func (m *model) structured(schema []byte) llms.Model {
	key := string(schema)
	m.mu.Lock()
	defer m.mu.Unlock()
	if llm, ok := m.schemaClients[key]; ok {
		return llm
	}
	llm := m.LLM
	if l, err := m.WithSchema(schema); err == nil {
		llm = l
	}
	m.schemaClients[key] = llm
	return llm
}

// String names the model as Identity does.
func (m *model) String() string { return m.Identity() }
