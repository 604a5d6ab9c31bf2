package observe

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/mdap-go/mdap/internal/secrets"
	"go.opentelemetry.io/otel/trace"
)

// Log formats of NewLogHandler.
const (
	LogText = "text"
	LogJSON = "json"
)

// ErrLogFormat: a --log-format other than text or json.
var ErrLogFormat = fmt.Errorf("log format: use %s or %s", LogText, LogJSON)

// Redacted replaces a secret in a log line.
const Redacted = secrets.Redacted

// NewLogHandler returns a slog handler writing format (LogText or
// LogJSON) to w with opts, that adds trace_id and span_id to every record
// logged with a context holding a valid span (that is, when tracing is
// on), and that never writes a secret: an attribute whose key names one
// (api_key, authorization, password, secret, token but not tokens) is
// written as [REDACTED], and so is every occurrence of each of held
// (the API keys the process holds; those under 4 bytes are left out, they
// would redact ordinary text) in any string value or message, as it is or
// JSON-escaped (see RedactWriter), before the handler encodes it.
// opts.ReplaceAttr, if set, runs after the redaction.
//
// Errors: ErrLogFormat.
func NewLogHandler(w io.Writer, format string, opts *slog.HandlerOptions, held ...string) (slog.Handler, error) {
	var o slog.HandlerOptions
	if opts != nil {
		o = *opts
	}
	r := &redactor{set: secrets.New(held...)}
	next := o.ReplaceAttr
	o.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
		a = r.attr(a)
		if next != nil {
			a = next(groups, a)
		}
		return a
	}
	var h slog.Handler
	switch format {
	case LogText, "":
		h = slog.NewTextHandler(w, &o)
	case LogJSON:
		h = slog.NewJSONHandler(w, &o)
	default:
		return nil, fmt.Errorf("%w, not %q", ErrLogFormat, format)
	}
	return &traceHandler{Handler: h, r: r}, nil
}

// Logger is a logger of NewLogHandler's handler: format to w with opts,
// held secrets never written; a format NewLogHandler refuses falls back
// to LogText (a command checks its --log-format before). It never fails.
func Logger(w io.Writer, format string, opts *slog.HandlerOptions, held ...string) *slog.Logger {
	h, err := NewLogHandler(w, format, opts, held...)
	if err != nil {
		h, _ = NewLogHandler(w, LogText, opts, held...)
	}
	return slog.New(h)
}

// WarnLogger is Logger at slog.LevelWarn, for a batch's or a
// coordinator's warnings: its LogText lines carry no time (they read as
// a command's messages), its LogJSON records do. It never fails.
func WarnLogger(w io.Writer, format string, held ...string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelWarn}
	if format != LogJSON {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}
	}
	return Logger(w, format, opts, held...)
}

// redactor removes secrets from attributes.
type redactor struct{ set secrets.Set }

// secretKey reports whether an attribute key names a secret.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	if strings.HasSuffix(k, "tokens") { // counts: input_tokens
		return false
	}
	for _, s := range []string{"api_key", "apikey", "api-key", "authorization", "password", "secret", "token", "credential"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

func (r *redactor) text(s string) string {
	s, _ = r.set.RedactString(s)
	return s
}

func (r *redactor) attr(a slog.Attr) slog.Attr {
	if secretKey(a.Key) {
		return slog.String(a.Key, Redacted)
	}
	if len(r.set) == 0 {
		return a
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.text(v.String()))
	case slog.KindAny:
		// errors and Stringers: their text, redacted.
		if s := r.text(fmt.Sprint(v.Any())); s != fmt.Sprint(v.Any()) {
			return slog.String(a.Key, s)
		}
	}
	return a
}

// traceHandler adds the span's ids and redacts the message.
type traceHandler struct {
	slog.Handler
	r *redactor
}

func (h *traceHandler) Handle(ctx context.Context, rec slog.Record) error {
	if len(h.r.set) > 0 {
		if m := h.r.text(rec.Message); m != rec.Message {
			rec.Message = m
		}
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		rec = rec.Clone()
		rec.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h *traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &traceHandler{Handler: h.Handler.WithAttrs(as), r: h.r}
}

func (h *traceHandler) WithGroup(name string) slog.Handler {
	return &traceHandler{Handler: h.Handler.WithGroup(name), r: h.r}
}
