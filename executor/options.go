package executor

import (
	"cmp"
	"log/slog"
	"time"

	"github.com/mdap-go/mdap/categories"
)

// Defaults of [New]'s options.
const (
	DefaultTimeout      = 10 * time.Second // per call
	DefaultOutputCap    = 64 << 10         // bytes of content per observation
	DefaultArgsCap      = 4 << 20          // bytes of one call's arguments, encoded as JSON
	DefaultMaxAbandoned = 4                // calls of tools that ignored their timeout, still running
)

// Option configures [New].
type Option func(*Executor)

// WithPolicy sets which tools may run. Without it an executor uses
// [categories.DefaultPolicy]: the read-only categories only. The policy
// allows exactly what it lists: WithPolicy(categories.Policy{}) allows
// nothing but the index tool.
func WithPolicy(p categories.Policy) Option { return func(e *Executor) { e.policy = p } }

// WithTimeout sets the per-call timeout (default [DefaultTimeout]). A
// non-positive d keeps the default.
func WithTimeout(d time.Duration) Option {
	return func(e *Executor) { e.timeout = cmp.Or(max(d, 0), e.timeout) }
}

// WithOutputCap sets the most bytes of content an observation carries
// (default [DefaultOutputCap]); longer content is cut on a UTF-8 boundary
// and marked. A non-positive n keeps the default.
func WithOutputCap(n int) Option {
	return func(e *Executor) { e.outputCap = cmp.Or(max(n, 0), e.outputCap) }
}

// WithMaxAbandoned sets how many calls of registered tools that ignored
// their timeout may still be running, abandoned, at once (default
// [DefaultMaxAbandoned]). While that many are, Execute refuses calls of
// registered tools without starting them (intent.ReasonToolError, saying
// why); [ContextBound] tools (the built-in file tools) always honour their
// timeout and are never abandoned. A non-positive n keeps the default.
func WithMaxAbandoned(n int) Option {
	return func(e *Executor) { e.maxAbandoned = cmp.Or(max(n, 0), e.maxAbandoned) }
}

// WithTaxonomy sets the taxonomy the executor keeps total (default: a
// fresh [categories.Builtin]). Registering tools adds unknown ones to it,
// so share it only on purpose.
func WithTaxonomy(t *categories.Taxonomy) Option {
	return func(e *Executor) { e.tax = cmp.Or(t, e.tax) }
}

// WithLogger sets the logger (default: one that discards). Denials are
// logged at Info, timeouts and panics at Warn and Error, runs at Debug.
func WithLogger(l *slog.Logger) Option {
	return func(e *Executor) { e.log = cmp.Or(l, e.log) }
}

// WithWorkspace gives the executor a workspace: New registers its tools
// first, [Executor.Root] is its root and [Executor.Close] closes it. The
// executor owns it from then on: New closes it when it fails.
func WithWorkspace(w Workspace) Option { return func(e *Executor) { e.ws = w } }

// WithTools registers tools after the workspace's, as
// [Executor.Register] would; New fails on the first that Register refuses.
func WithTools(tools ...Tool) Option {
	return func(e *Executor) { e.extra = append(e.extra, tools...) }
}
