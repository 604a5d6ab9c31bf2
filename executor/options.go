package executor

import (
	"log/slog"
	"time"

	"github.com/mdap-go/mdap/categories"
)

// Defaults of [New]'s options.
const (
	DefaultTimeout      = 10 * time.Second // per call
	DefaultOutputCap    = 64 << 10         // bytes of content per observation
	DefaultReadCap      = 1 << 20          // bytes read from (or written to) one file
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
	return func(e *Executor) {
		if d > 0 {
			e.timeout = d
		}
	}
}

// WithOutputCap sets the most bytes of content an observation carries
// (default [DefaultOutputCap]); longer content is cut on a UTF-8 boundary
// and marked. A non-positive n keeps the default.
func WithOutputCap(n int) Option {
	return func(e *Executor) {
		if n > 0 {
			e.outputCap = n
		}
	}
}

// WithReadCap sets the most bytes the built-in tools read from one file,
// and the largest content write_file accepts (default [DefaultReadCap]).
// A non-positive n keeps the default.
func WithReadCap(n int64) Option {
	return func(e *Executor) {
		if n > 0 {
			e.readCap = n
		}
	}
}

// WithRefuseHardLinks makes read_file and grep refuse a regular file with
// more than one name (a link count above one): named, it is a denial
// (intent.ReasonOutsideRoot); met while grep walks a folder, it is skipped.
//
// Why: the sandbox is about names, not files. Every name a tool resolves
// stays inside the root, but a hard link inside the root is the same file
// as its other names, wherever they are, so by default reading it reads a
// file that may also live outside the root. Writes need no such option:
// write_file replaces a name with a new file and never changes the file
// its other names share. On platforms that report no link count (not
// Unix) the option refuses nothing.
func WithRefuseHardLinks() Option { return func(e *Executor) { e.refuseHardLinks = true } }

// WithMaxAbandoned sets how many calls of registered tools that ignored
// their timeout may still be running, abandoned, at once (default
// [DefaultMaxAbandoned]). While that many are, Execute refuses calls of
// registered tools without starting them (intent.ReasonToolError, saying
// why); built-in tools always honour their timeout and are never
// abandoned. A non-positive n keeps the default.
func WithMaxAbandoned(n int) Option {
	return func(e *Executor) {
		if n > 0 {
			e.maxAbandoned = n
		}
	}
}

// WithTaxonomy sets the taxonomy the executor keeps total (default: a
// fresh [categories.Builtin]). Registering tools adds unknown ones to it,
// so share it only on purpose.
func WithTaxonomy(t *categories.Taxonomy) Option {
	return func(e *Executor) {
		if t != nil {
			e.tax = t
		}
	}
}

// WithLogger sets the logger (default: one that discards). Denials are
// logged at Info, timeouts and panics at Warn and Error, runs at Debug.
func WithLogger(l *slog.Logger) Option {
	return func(e *Executor) {
		if l != nil {
			e.log = l
		}
	}
}

// WithTools registers tools after the built-in ones, as
// [Executor.Register] would; New fails on the first that Register refuses.
func WithTools(tools ...Tool) Option {
	return func(e *Executor) { e.extra = append(e.extra, tools...) }
}
