package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// permanent returns a permanent error of kind: it wraps maker.ErrPermanent
// and kind, and reads "permanent provider error: KIND: MESSAGE".
func permanent(kind error, format string, a ...any) *providerError {
	return &providerError{
		msg:  fmt.Sprintf("%s: %s: %s", maker.ErrPermanent, kind, fmt.Sprintf(format, a...)),
		errs: []error{maker.ErrPermanent, kind},
	}
}

// transient returns a transient error of kind, reading "KIND: MESSAGE".
func transient(kind error, format string, a ...any) *providerError {
	return &providerError{msg: fmt.Sprintf("%s: %s", kind, fmt.Sprintf(format, a...)), errs: []error{kind}}
}

// because adds causes to e's chain, not to its message.
func (e *providerError) because(causes ...error) *providerError {
	for _, c := range causes {
		if c != nil {
			e.errs = append(e.errs, c)
		}
	}
	return e
}

// classify turns a failed call into the error the solver sees: a
// permanent one for what no retry fixes, with a message that says what to
// fix; a transient one, after waiting a rate limit's delay, otherwise.
func (m *model) classify(ctx context.Context, c seen, err error, took time.Duration) error {
	mapped := err
	if m.mapErr != nil && !errors.Is(err, errClientPanic) {
		mapped = m.mapErr(err)
	}
	at := m.spec.String() + " at " + m.url
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
		return permanent(ErrUnreachable, "%s: nothing listens there (connection refused): start the server, or point %s at it", at, m.urlHint()).because(c.sendErr, mapped)
	case c.sendErr != nil && isNoSuchHost(c.sendErr):
		return permanent(ErrUnreachable, "%s: the host name does not resolve: fix %s", at, m.urlHint()).because(c.sendErr, mapped)
	case c.status == http.StatusUnauthorized || c.status == http.StatusForbidden:
		return permanent(ErrAuth, "%s: %s: %s", at, status, m.authHint()).because(mapped)
	case c.status == http.StatusNotFound:
		return m.diagnose404(ctx, c, status).because(mapped)
	case c.status == http.StatusBadRequest || c.status == http.StatusUnprocessableEntity:
		return permanent(ErrRequestRefused, "%s: the server refused the request (%s)", at, status).because(mapped)
	case c.status == http.StatusPaymentRequired || isQuota(code, msg):
		return permanent(ErrQuota, "%s: %s: the account's quota or credit is spent; check its plan and billing", at, status).because(mapped)
	case c.status == http.StatusTooManyRequests:
		return m.rateLimited(c, at, status, mapped)
	case c.sendErr != nil && (took >= m.timeout || isTimeout(c.sendErr) || isTimeout(err)):
		// langchaingo's OpenAI client hides the client's timeout behind
		// a message of its own, and the transport sees a cancellation.
		return (&providerError{msg: fmt.Sprintf("%s: no reply within --timeout %s", at, m.timeout)}).because(mapped, c.sendErr)
	case c.sendErr != nil:
		return (&providerError{msg: fmt.Sprintf("%s: %v", at, c.sendErr)}).because(mapped, c.sendErr)
	case c.status >= 400:
		return (&providerError{msg: at + ": " + status}).because(mapped)
	}
	return fmt.Errorf("%s: %w", at, mapped)
}

// incomplete is the error of an Ollama reply stream without its final
// line, which langchaingo's client turns into an empty reply.
func (m *model) incomplete(c seen, took time.Duration) error {
	why := "the server closed it"
	switch {
	case took >= m.timeout || (c.readErr != nil && isTimeout(c.readErr)):
		why = fmt.Sprintf("the call reached --timeout %s", m.timeout)
	case c.readErr != nil:
		why = c.readErr.Error()
	}
	return transient(ErrIncomplete, "%s at %s: the reply stream ended after %d bytes without its final \"done\" line (%s)", m.spec, m.url, c.bytesRead, why).because(c.readErr)
}

func (m *model) urlHint() string { return m.provider.urlHint }

func (m *model) authHint() string { return m.provider.authHint(m) }

// refusedKey says where the refused key came from and where to fix it:
// the variable it was read from (the provider's, or a spec's ;key=VAR).
func (m *model) refusedKey() string {
	if m.keySource == "Options.APIKey" {
		return "the server refused the API key given in Options.APIKey: give a valid key"
	}
	return "the server refused the API key from " + m.keySource + ": set " + m.keySource + " to a valid key"
}

func isNoSuchHost(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}

func isTimeout(err error) bool {
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
	limit := llms.NewError(llms.ErrCodeRateLimit, m.spec.Provider, "rate limited").WithCause(mapped).WithDetail("retry_after", d)
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

// maxListed bounds the model names an error lists.
const maxListed = 20

// diagnose404 says what a 404 meant: an unknown model (listing those the
// server has, from GET /v1/models or /api/tags) or a base URL of the
// wrong form (saying which form was meant).
func (m *model) diagnose404(ctx context.Context, c seen, status string) *providerError {
	if m.provider.notFound != nil {
		return m.provider.notFound(ctx, m, c, status)
	}
	return permanent(ErrNotFound, "%s at %s: %s from %s %s: check the model name after %q", m.spec, m.url, status, c.method, c.url, m.spec.Provider+":")
}

func listed(names []string) string {
	if len(names) == 0 {
		return "no models"
	}
	slices.Sort(names)
	if len(names) > maxListed {
		return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return strings.Join(names, ", ")
}

// hasModel reports whether names holds name, taking Ollama's default
// tag into account ("tiny" is "tiny:latest").
func hasModel(names []string, name string) bool {
	for _, n := range names {
		if n == name || n == name+":latest" || strings.TrimSuffix(n, ":latest") == name {
			return true
		}
	}
	return false
}

func openAINames(b []byte) ([]string, error) {
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

func ollamaNames(b []byte) ([]string, error) {
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

// probeTimeout bounds a diagnostic GET.
const probeTimeout = 5 * time.Second

// list fetches a model list with a plain GET, for a diagnostic only (the
// calls themselves go through langchaingo).
func (m *model) list(ctx context.Context, u string, parse func([]byte) ([]string, error)) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if m.provider.listKey && m.key != "" {
		req.Header.Set("Authorization", "Bearer "+m.key)
	}
	resp, err := m.probe.Do(req)
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

// redactKey returns body with the model's key, in every form a server may
// echo it (internal/secrets), replaced: before errorMessage cuts a long
// body, which would leave a cut key's first characters where no
// redaction of the whole key finds them.
func (m *model) redactKey(body []byte) []byte {
	if m.key == "" || m.keySource == "placeholder" {
		return body
	}
	out, _ := secrets.New(m.key).Redact(body)
	return out
}
