package models

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mdap-go/mdap/internal/secrets"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// The kinds of provider error a model from Open returns, for errors.Is.
// Those marked permanent also wrap maker.ErrPermanent, so the solver stops
// the step at once instead of retrying; the others are transient and count
// against the step's error budget, with backoff. Every error also names
// the model and the server's URL, and keeps langchaingo's mapped error
// (llms.IsRateLimitError and friends see it) and its cause.
var (
	// ErrSpec is wrapped by every error about a --model spec or its
	// options: Open's errors, before any network call.
	ErrSpec = errors.New("bad model spec")
	// ErrUnreachable (permanent): nothing listens at the server's address
	// (connection refused), or its host name does not resolve.
	ErrUnreachable = errors.New("server unreachable")
	// ErrAuth (permanent): the server refused the credentials (HTTP 401
	// or 403); the message names the environment variable to set.
	ErrAuth = errors.New("authentication failed")
	// ErrUnknownModel (permanent): the server has no model of that name
	// (HTTP 404); the message lists the models it has, when it says.
	ErrUnknownModel = errors.New("unknown model")
	// ErrNotFound (permanent): HTTP 404 for another reason, usually a base
	// URL of the wrong form; the message says which form was meant.
	ErrNotFound = errors.New("not found")
	// ErrRequestRefused (permanent): HTTP 400, a request the server will
	// refuse however often it is sent (a prompt over the context length,
	// a schema it cannot use).
	ErrRequestRefused = errors.New("request refused")
	// ErrToolsUnsupported (permanent, and ErrRequestRefused): HTTP 400, "MODEL
	// does not support tools" (Ollama): declare the tools in the prompt
	// instead (maker.DeclarePrompt).
	ErrToolsUnsupported = errors.New("native tools unsupported")
	// ErrQuota (permanent): the account's quota or credit is spent.
	ErrQuota = errors.New("quota exhausted")
	// ErrRateLimited (transient): HTTP 429. The error carries the delay
	// the server asked for (Retry-After, retry-after-ms) where the solver
	// (maker.RetryAfter) and maker/batch (a RetryAfter method) read it:
	// the sample waits it before it counts as failed. A delay over
	// Options.MaxRetryWait is permanent.
	ErrRateLimited = errors.New("rate limited")
	// ErrIncomplete (transient): the reply stream ended before its final
	// line: the call timed out mid-reply, or the server stopped.
	ErrIncomplete = errors.New("reply cut short")
)

// providerError is a classified error: its message says what happened
// and what to fix, and it wraps its kinds and the client's error without
// repeating the client's message.
type providerError struct {
	msg  string
	errs []error
}

func (e *providerError) Error() string   { return e.msg }
func (e *providerError) Unwrap() []error { return e.errs }

// Permanent returns a permanent error of kind (ErrUnknownModel,
// ErrNotFound, ...): it wraps maker.ErrPermanent and kind, and reads
// "permanent provider error: KIND: MESSAGE". Providers' NotFound return
// one.
func Permanent(kind error, format string, a ...any) error { return permanent(kind, format, a...) }

func permanent(kind error, format string, a ...any) *providerError {
	return &providerError{
		msg:  fmt.Sprintf("%s: %s: %s", maker.ErrPermanent, kind, fmt.Sprintf(format, a...)),
		errs: []error{maker.ErrPermanent, kind},
	}
}

// Transient returns a transient error of kind (ErrIncomplete, ...),
// reading "KIND: MESSAGE", with cause in its chain (not its message)
// when not nil. A provider's Stream returns one.
func Transient(kind, cause error, format string, a ...any) error {
	return transient(kind, format, a...).because(cause)
}

// transient returns a transient error of kind, reading "KIND: MESSAGE".
func transient(kind error, format string, a ...any) *providerError {
	return &providerError{msg: fmt.Sprintf("%s: %s", kind, fmt.Sprintf(format, a...)), errs: []error{kind}}
}

// because adds causes to e's chain, not to its message.
func (e *providerError) because(causes ...error) *providerError {
	e.errs = append(e.errs, slices.DeleteFunc(causes, func(c error) bool { return c == nil })...)
	return e
}

// classify turns a failed call into the error the solver sees: a
// permanent one for what no retry fixes, with a message that says what to
// fix; a transient one, after waiting a rate limit's delay, otherwise.
func (m *model) classify(ctx context.Context, c seen, err error, took time.Duration) error {
	mapped := err
	if m.MapErr != nil && !errors.Is(err, errClientPanic) {
		mapped = m.MapErr(err)
	}
	at := m.Spec.String() + " at " + m.URL
	msg, code := errorMessage(m.redactKey(c.errBody))
	status := ""
	if c.status > 0 {
		status = "HTTP " + strconv.Itoa(c.status)
		if msg != "" {
			status += ": " + msg
		}
	}
	switch {
	case c.sendErr != nil && errors.Is(c.sendErr, syscall.ECONNREFUSED):
		return permanent(ErrUnreachable, "%s: nothing listens there (connection refused): start the server, or point %s at it", at, m.provider.URLHint).because(c.sendErr, mapped)
	case c.sendErr != nil && isNoSuchHost(c.sendErr):
		return permanent(ErrUnreachable, "%s: the host name does not resolve: fix %s", at, m.provider.URLHint).because(c.sendErr, mapped)
	case c.status == http.StatusUnauthorized || c.status == http.StatusForbidden:
		return permanent(ErrAuth, "%s: %s: %s", at, status, m.provider.AuthHint(&m.Conn)).because(mapped)
	case c.status == http.StatusNotFound:
		return m.diagnose404(ctx, c, status, mapped)
	case c.status == http.StatusBadRequest && strings.Contains(msg, "does not support tools"):
		return permanent(ErrToolsUnsupported, "%s: %s: the server takes no native tool declarations for this model; declare the tools in the prompt instead", at, status).because(ErrRequestRefused, mapped)
	case c.status == http.StatusBadRequest || c.status == http.StatusUnprocessableEntity:
		return permanent(ErrRequestRefused, "%s: the server refused the request (%s)", at, status).because(mapped)
	case c.status == http.StatusPaymentRequired || isQuota(code, msg):
		return permanent(ErrQuota, "%s: %s: the account's quota or credit is spent; check its plan and billing", at, status).because(mapped)
	case c.status == http.StatusTooManyRequests:
		return m.rateLimited(c, at, status, mapped)
	case c.sendErr != nil && (took >= m.Timeout || IsTimeout(c.sendErr) || IsTimeout(err)):
		// langchaingo's OpenAI client hides the client's timeout behind
		// a message of its own, and the transport sees a cancellation.
		return (&providerError{msg: fmt.Sprintf("%s: no reply within --timeout %s", at, m.Timeout)}).because(mapped, c.sendErr)
	case c.sendErr != nil:
		return (&providerError{msg: fmt.Sprintf("%s: %v", at, c.sendErr)}).because(mapped, c.sendErr)
	case c.status >= 400:
		return (&providerError{msg: at + ": " + status}).because(mapped)
	}
	return fmt.Errorf("%s: %w", at, mapped)
}

func isNoSuchHost(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}

// IsTimeout reports whether err is a deadline's or a network timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func isQuota(code, msg string) bool {
	return code == "insufficient_quota" || strings.Contains(strings.ToLower(msg), "exceeded your current quota")
}

// rateLimited returns a rate limit's error at once, carrying the delay
// the server asked for: as the llms.Error detail "retry_after", which
// the solver's microagent waits (honouring the context) before the
// sample counts as failed, so the vote never retries in a tight loop; and
// as a RetryAfter() method, with which maker/batch's shared limits pause
// every task. A delay over MaxRetryWait is permanent.
func (m *model) rateLimited(c seen, at, status string, mapped error) error {
	code := ""
	var le *llms.Error
	if errors.As(mapped, &le) {
		code = " (" + le.Provider + ": " + string(le.Code) + ")"
	}
	d, ok := ParseRetryAfter(c.header, time.Now())
	if !ok {
		return transient(ErrRateLimited, "%s: %s%s", at, status, code).because(mapped)
	}
	if d > m.maxRetryWait {
		e := permanent(ErrRateLimited, "%s: %s%s: the server asks for a pause of %s before the next call, more than %s: try again later", at, status, code, d.Round(time.Second), m.maxRetryWait).because(mapped)
		return e // no delay: nothing to wait for
	}
	limit := llms.NewError(llms.ErrCodeRateLimit, m.Spec.Provider, "rate limited").WithCause(mapped).WithDetail("retry_after", d)
	e := transient(ErrRateLimited, "%s: %s%s; the server asks for a pause of %s", at, status, code, d).because(limit)
	return &delayed{providerError: e, after: d}
}

// delayed is a rate limit's error, with the delay the server asked for.
type delayed struct {
	*providerError
	after time.Duration
}

// RetryAfter is the delay the server asked for (maker/batch reads it).
func (d *delayed) RetryAfter() time.Duration { return d.after }

// diagnose404 says what a 404 meant: the provider's NotFound (an unknown
// model, listing those the server has, or a base URL of the wrong form),
// else a word on the model's name.
func (m *model) diagnose404(ctx context.Context, c seen, status string, mapped error) error {
	if m.provider.NotFound != nil {
		err := m.provider.NotFound(ctx, &m.Conn, fmt.Sprintf("%s %s", c.method, c.url), status)
		if pe, ok := err.(*providerError); ok {
			return pe.because(mapped)
		}
		return err
	}
	return permanent(ErrNotFound, "%s at %s: %s from %s %s: check the model name after %q", m.Spec, m.URL, status, c.method, c.url, m.Spec.Provider+":").because(mapped)
}

// redactKey returns body with the model's key, in every form a server may
// echo it (internal/secrets), replaced: before errorMessage cuts a long
// body, which would leave a cut key's first characters where no
// redaction of the whole key finds them.
func (m *model) redactKey(body []byte) []byte {
	if m.Key == "" || m.KeySource == "placeholder" {
		return body
	}
	out, _ := secrets.New(m.Key).Redact(body)
	return out
}
