package simserver

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/loopback"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
)

// The sentinel errors of this package; test with [errors.Is].
var (
	// ErrConfig: [New] refused a configuration. The message names the
	// field and the value.
	ErrConfig = fielderr.ErrConfig

	// ErrRemoteAddr: [CheckAddr] refused a listen address that is not a
	// loopback address while remote clients are not allowed.
	ErrRemoteAddr = errors.New("not a loopback address")

	// ErrAddr: [CheckAddr] could not read a listen address.
	ErrAddr = errors.New("bad listen address")
)

// DefaultModelName is the model the server lists at /v1/models when
// Config.ModelName is empty.
const DefaultModelName = "sim"

// DefaultMaxBodyBytes bounds a request body when Config.MaxBodyBytes is
// zero: 4 MiB. A larger body is answered 413.
const DefaultMaxBodyBytes = 4 << 20

// MaxRetryAfter bounds Faults.RetryAfter, in seconds.
const MaxRetryAfter = 3600

// defaultCap is the reply cap the simulated model assumes for red-flag
// replies when a request gives none.
const defaultCap = maker.DefaultMaxTokens

// Config is what a [Server] serves.
type Config struct {
	// Oracle answers the prompts of the task the server is started for
	// (hanoi.Oracle{}, spec.Oracle{Spec: s}, or any sim.Oracle). Required.
	Oracle sim.Oracle

	// Sim is the simulated model's behaviour: seed, accuracy, wrong-answer
	// mix, red flags, provider errors (answered 500) and latency. Start
	// from sim.DefaultConfig(). Sim.Seed also seeds the faults.
	Sim sim.Config

	// Faults are the transport faults served instead of a reply. The zero
	// value serves none.
	Faults Faults `flags:""`

	// ModelName is the model listed at /v1/models; empty means
	// DefaultModelName. A chat request may name any model: it is answered
	// by the simulated model and its name echoed back.
	ModelName string `flag:"model-name" usage:"the model listed at /v1/models (a request may name any model)"`

	// MaxBodyBytes bounds a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// Bounds are the limits of Serve's HTTP server (timeouts, connection
	// and request caps); the zero value means DefaultBounds.
	Bounds Bounds
	// Billing is how usage is reported: prompt caching (cached_tokens)
	// and reasoning-length replies (see Billing).
	Billing Billing `flags:""`

	// Logger receives a debug line per request and warnings of the HTTP
	// server. Nil means none.
	Logger *slog.Logger
}

// Validate returns nil or the *fielderr.Error (wrapping [ErrConfig]) of
// the first field of c that is refused: no Oracle ("Oracle"), a field of
// Sim (sim.Config.Validate's), of Faults ([Faults.Validate]) or of
// Billing ([Billing.Validate]), each named as in its own config, or a
// negative MaxBodyBytes. Whether the Oracle can play Sim is New's to
// check (sim.New). Cost: O(1).
func (c Config) Validate() error {
	if c.Oracle == nil {
		return fielderr.New(configName, "Oracle", nil, "give the task's oracle (hanoi.Oracle{}, spec.Oracle{Spec: s})")
	}
	if err := cmp.Or(c.Sim.Validate(), c.Faults.Validate(), c.Billing.Validate()); err != nil {
		return err
	}
	if c.MaxBodyBytes < 0 {
		return fielderr.New(configName, "MaxBodyBytes", c.MaxBodyBytes, "use 0 (the default) or more")
	}
	return nil
}

// configName is where a refused [Config] comes from, in its error.
const configName = "simserver.Config"

// Faults are the fractions of chat completion requests answered with a
// fault instead of a reply, for reliability tests. Each is a probability
// in [0, 1]; they must add up to at most 1. Which request gets which fault
// is drawn from (Config.Sim.Seed, the request's step and sample index; see
// the package documentation), so it is reproducible exactly as replies are.
type Faults struct {
	// RateLimit: 429 with a Retry-After header of RetryAfter seconds and an
	// OpenAI rate-limit error body.
	RateLimit float64 `flag:"fault-429" usage:"fraction of requests answered 429 with a Retry-After header"`
	// RetryAfter is the Retry-After header of a 429, in whole seconds,
	// 0 to MaxRetryAfter.
	RetryAfter int `flag:"retry-after" usage:"the Retry-After of a 429, in seconds (0 to 3600)"`
	// ServerError: 500 with an OpenAI server error body.
	ServerError float64 `flag:"fault-500" usage:"fraction of requests answered 500"`
	// Hang: no answer at all until the client gives up (its context ends,
	// its connection closes) or the server shuts down; then the
	// connection is closed without a response.
	Hang float64 `flag:"fault-hang" usage:"fraction of requests that hang until the client gives up"`
	// Truncate: 200 with the headers (Content-Length of the whole reply)
	// and the first half of the reply's JSON, then the connection is
	// closed.
	Truncate float64 `flag:"fault-truncate" usage:"fraction of requests whose reply is cut after the headers and half the JSON"`
	// Garbage: 200, Content-Type application/json, and a body that is not
	// JSON.
	Garbage float64 `flag:"fault-garbage" usage:"fraction of requests answered 200 with a body that is not JSON"`
}

// Total is the fraction of requests answered with a fault.
func (f Faults) Total() float64 {
	return f.RateLimit + f.ServerError + f.Hang + f.Truncate + f.Garbage
}

// String describes f for a log line: "none", or each fraction and the
// Retry-After of a 429.
func (f Faults) String() string {
	if f.Total() == 0 {
		return "none"
	}
	return fmt.Sprintf("429 %g (Retry-After %ds), 500 %g, hang %g, truncate %g, garbage %g",
		f.RateLimit, f.RetryAfter, f.ServerError, f.Hang, f.Truncate, f.Garbage)
}

// Validate returns nil or a *maker.FieldError wrapping [ErrConfig] that
// names the first bad field of f, its value and the fix: a fraction
// outside [0, 1] or not a number ("RateLimit = 1.5: use a fraction from 0
// to 1"), fractions adding up to more than 1 (the fractions above 0, each
// named, "add up to 1.2; they must add up to at most 1"), or RetryAfter
// outside 0 to MaxRetryAfter. A command maps the field names to its flags
// (maker serve-sim does).
func (f Faults) Validate() error {
	fractions := []fielderr.Field{{Name: "RateLimit", Value: f.RateLimit}, {Name: "ServerError", Value: f.ServerError},
		{Name: "Hang", Value: f.Hang}, {Name: "Truncate", Value: f.Truncate}, {Name: "Garbage", Value: f.Garbage}}
	for _, x := range fractions {
		if v := x.Value.(float64); !(v >= 0 && v <= 1) {
			return &fielderr.Error{Config: "simserver.Faults", Fields: []fielderr.Field{x}, Fix: "use a fraction from 0 to 1"}
		}
	}
	if t := f.Total(); t > 1+1e-12 {
		some := slices.DeleteFunc(fractions, func(x fielderr.Field) bool { return x.Value.(float64) == 0 })
		return &fielderr.Error{Config: "simserver.Faults", Fields: some, Fix: fmt.Sprintf("add up to %v; they must add up to at most 1", t)}
	}
	if f.RetryAfter < 0 || f.RetryAfter > MaxRetryAfter {
		return &fielderr.Error{Config: "simserver.Faults", Fields: []fielderr.Field{{Name: "RetryAfter", Value: f.RetryAfter}}, Fix: fmt.Sprintf("use 0 to %d seconds", MaxRetryAfter)}
	}
	return nil
}

// CheckAddr checks a listen address (host:port) before listening: the host
// must be a loopback address (127.0.0.0/8, ::1) or "localhost" unless
// allowRemote is true, since the server has no authentication. An empty
// host means every interface, so it is remote. Errors are a
// *maker.FieldError naming the field "Addr" and how to fix it ("AllowRemote"
// for a remote one), wrapping [ErrAddr] (not host:port, a port that is not
// a number from 0 to 65535) or [ErrRemoteAddr]. It resolves no name. Cost:
// O(len(addr)).
func CheckAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 || strings.TrimLeft(port, "0123456789") != "" {
		return &fielderr.Error{Err: ErrAddr, Fields: []fielderr.Field{{Name: "Addr", Value: addr}},
			Fix: "want HOST:PORT with a port from 0 to 65535, such as 127.0.0.1:8090 (port 0: any free port)"}
	}
	if allowRemote || loopback.Host(host) {
		return nil
	}
	return &fielderr.Error{Err: ErrRemoteAddr, Fields: []fielderr.Field{{Name: "Addr", Value: addr}},
		Fix: fmt.Sprintf("it listens on %s, and the server has no authentication: use a loopback address such as 127.0.0.1:8090, or allow other hosts with AllowRemote", cmp.Or(host, "every interface"))}
}
