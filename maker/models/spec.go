package models

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/maker"
)

// Spec is a parsed --model spec: PROVIDER:NAME, optionally followed by
// =IN/OUT[/CACHED[/WRITE]], the model's price in dollars per million input and output
// tokens ("openai:gpt-4o-mini=0.15/0.60"); or "sim", the simulated model.
type Spec struct {
	// Provider is "sim", "openai", "ollama" or "anthropic".
	Provider string
	// Name is the model's name at its provider; empty for "sim".
	Name string
	// Price is the price the spec gives, nil when it gives none.
	Price *maker.Price
}

// String is the spec without its price: "openai:gpt-4o-mini", "sim". It
// is what reports and the journal name the model by.
func (s Spec) String() string {
	if s.Provider == "sim" {
		return "sim"
	}
	return s.Provider + ":" + s.Name
}

// Specs lists the accepted spec forms, for help texts.
const Specs = "sim, openai:MODEL, ollama:MODEL or anthropic:MODEL, each optionally with =IN/OUT[/CACHED[/WRITE]], its price in dollars per million input/output (cached input, cache write) tokens, and optionally ;base=URL and ;key=ENV_VAR, its own server and key variable"

// ParseSpec reads a --model spec. The price, if any, follows the last
// "=" and is two to four non-negative numbers separated by "/": input,
// output, and optionally cached input and cache write (maker.Price; 0 or
// absent means the input price). Errors wrap ErrSpec
// and say which forms are accepted. Cost: O(len(spec)).
func ParseSpec(spec string) (Spec, error) {
	if spec == "sim" {
		return Spec{Provider: "sim"}, nil
	}
	provider, rest, ok := strings.Cut(spec, ":")
	if !ok {
		if strings.HasPrefix(spec, "sim=") {
			return Spec{}, fmt.Errorf("%w: %q: the simulated model costs nothing; price it with --price-in and --price-out", ErrSpec, spec)
		}
		return Spec{}, fmt.Errorf("%w: %q; use %s", ErrSpec, spec, Specs)
	}
	if providerNamed(provider) == nil {
		return Spec{}, unregistered(provider, spec)
	}
	s := Spec{Provider: provider, Name: rest}
	if i := strings.LastIndex(rest, "="); i >= 0 {
		p, err := parsePrice(rest[i+1:])
		if err != nil {
			return Spec{}, fmt.Errorf("%w: price %q in %q: %w; write =IN/OUT[/CACHED[/WRITE]] in dollars per million input and output (cached input, cache write) tokens, as in openai:gpt-4o-mini=0.15/0.60/0.075", ErrSpec, rest[i+1:], spec, err)
		}
		s.Name, s.Price = rest[:i], &p
	}
	if strings.TrimSpace(s.Name) == "" || s.Name != strings.TrimSpace(s.Name) {
		return Spec{}, fmt.Errorf("%w: %q: no model name after %q (or white space around it); use %s", ErrSpec, spec, provider+":", Specs)
	}
	return s, nil
}

// CheckSpec reports whether spec has an accepted form, without building
// anything: nil, or SplitEndpoint's or ParseSpec's error.
func CheckSpec(spec string) error {
	head, _, err := SplitEndpoint(spec, Options{})
	if err != nil {
		return err
	}
	_, err = ParseSpec(head)
	return err
}

func parsePrice(s string) (maker.Price, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return maker.Price{}, fmt.Errorf("want two to four prices separated by /")
	}
	num := func(v string) (float64, error) {
		f, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		switch {
		case err != nil:
			return 0, fmt.Errorf("%q is not a number", v)
		case f < 0 || math.IsInf(f, 0) || math.IsNaN(f):
			return 0, fmt.Errorf("%q: a price is a finite number of 0 or more", v)
		}
		return f, nil
	}
	var p maker.Price
	fields := []*float64{&p.InputPerMillion, &p.OutputPerMillion, &p.CachedInputPerMillion, &p.CacheWritePerMillion}
	for k, v := range parts {
		var err error
		if *fields[k], err = num(v); err != nil {
			return maker.Price{}, err
		}
	}
	return p, nil
}

// BaseURL returns the server a model of provider talks to, and where that
// came from: baseURL when it is not empty ("--base-url"), else the
// provider's environment variable (OPENAI_BASE_URL or OPENAI_API_BASE,
// OLLAMA_HOST, ANTHROPIC_BASE_URL), else the provider's public default.
// The URL conventions differ: openai: wants the API root, which for
// OpenAI-compatible servers usually ends in /v1 (Ollama:
// http://127.0.0.1:11434/v1); ollama: wants the server root
// (http://127.0.0.1:11434); anthropic: wants the host root, as Anthropic's
// SDKs read ANTHROPIC_BASE_URL (https://api.anthropic.com; /v1/messages is
// added), and takes one ending in /v1 as the API root. Errors wrap ErrSpec: a URL no client could
// use (see CheckBaseURL), named with its source.
func BaseURL(provider, baseURL string) (u, source string, err error) {
	p := providerNamed(provider)
	if p == nil {
		return "", "", unregistered(provider, provider+":")
	}
	u, source = baseURL, "--base-url"
	for _, k := range p.URLVars {
		if u != "" {
			break
		}
		v := os.Getenv(k)
		if p.ReadURLVar != nil {
			if v = strings.TrimSpace(v); v != "" {
				read, err := p.ReadURLVar(v)
				if err != nil {
					return "", k, BadURL("%s=%q: %v", k, v, err)
				}
				v = read
			}
		}
		u, source = v, k
	}
	if u == "" {
		u, source = p.DefaultURL, "the default"
	}
	if err := CheckBaseURL(provider, u); err != nil {
		if source == "--base-url" {
			return "", source, err
		}
		return "", source, fmt.Errorf("%s: %w", source, err)
	}
	return strings.TrimRight(u, "/"), source, nil
}

// urlError is an error about a server URL: it wraps ErrSpec without
// saying "bad model spec".
type urlError struct{ msg string }

func (e *urlError) Error() string { return e.msg }
func (e *urlError) Unwrap() error { return ErrSpec }

// BadURL returns an error about a server URL: it wraps ErrSpec, and its
// text is the format's alone (a Provider's WrongURL returns one).
func BadURL(format string, a ...any) error { return &urlError{msg: fmt.Sprintf(format, a...)} }

// CheckBaseURL refuses a server URL that no client of provider could use,
// before any client is built (langchaingo's Ollama client exits the
// process on a URL it cannot parse): the scheme must be http or https,
// and there must be a host. For ollama:, a URL ending in /v1 or /api is
// refused too: that is the OpenAI-compatible path (for openai:) or an
// endpoint, and ollama: wants the server root. Errors wrap ErrSpec and
// show a URL of the right form.
func CheckBaseURL(provider, raw string) error {
	example := "http://HOST:PORT or https://HOST/PATH"
	p := providerNamed(provider)
	if p != nil && p.Example != "" {
		example = p.Example
	}
	u, err := url.Parse(raw)
	shown := ShownURL(raw) // an error is shown: no credential in it
	switch {
	case err != nil:
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // url.Error quotes the whole URL
		}
		return BadURL("%q: %v; want %s", shown, err, example)
	case u.Scheme != "http" && u.Scheme != "https":
		return BadURL("%q: the scheme must be http or https, as in %s", shown, example)
	case u.Host == "":
		return BadURL("%q: no host; want %s", shown, example)
	case u.RawQuery != "" || u.Fragment != "":
		return BadURL("%q: a base URL has no query or fragment; want %s", shown, example)
	}
	if p != nil && p.WrongURL != nil {
		return p.WrongURL(u, shown)
	}
	return nil
}
