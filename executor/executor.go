package executor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/intent"
	"github.com/sourcegraph/conc/panics"
)

// Defaults of [New]'s options.
const (
	DefaultTimeout   = 10 * time.Second // per call
	DefaultOutputCap = 64 << 10         // bytes of content per observation
	DefaultReadCap   = 1 << 20          // bytes read from (or written to) one file
)

// lateGrace is how long Execute still waits, after the timeout fired, for a
// tool that honours its context to return what actually happened.
const lateGrace = 100 * time.Millisecond

// Executor checks and runs tool calls. Build one with [New]; the zero value
// is not usable. An Executor is safe for concurrent use; each call opens
// what it needs and holds nothing open between calls, so there is nothing
// to close.
type Executor struct {
	root      string // "" when there are no file tools
	policy    categories.Policy
	timeout   time.Duration
	outputCap int
	readCap   int64
	tax       *categories.Taxonomy
	log       *slog.Logger
	extra     []Tool

	mu    sync.RWMutex
	tools map[string]*registered
	index *registered
}

// Option configures [New].
type Option func(*Executor)

// WithPolicy sets which tools may run. The default is the zero
// [categories.Policy]: the read-only categories only.
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

// New returns an executor. With a non-empty root it registers the built-in
// file tools (read_file, list_dir, glob, grep, write_file) over that
// folder; with "" it has none, only the index tool and what WithTools or
// Register add.
//
// Errors: [ErrBadRoot] when root is not an existing folder; the errors of
// [Executor.Register] when a tool cannot be registered (for example a
// taxonomy given with WithTaxonomy that places read_file in another
// category).
func New(root string, opts ...Option) (*Executor, error) {
	e := &Executor{
		timeout:   DefaultTimeout,
		outputCap: DefaultOutputCap,
		readCap:   DefaultReadCap,
		log:       slog.New(slog.DiscardHandler),
		tools:     map[string]*registered{},
	}
	for _, o := range opts {
		o(e)
	}
	if e.tax == nil {
		e.tax = categories.Builtin()
	}
	idx := &indexTool{e: e}
	sch, doc, params, err := compileSchema(idx.Name(), idx.Schema())
	if err != nil {
		return nil, fmt.Errorf("%w: index tool: %v", ErrBadSchema, err) // a bug in this package
	}
	e.index = &registered{tool: idx, entry: categories.Entry{Name: categories.IndexTool}, schema: sch, doc: doc, params: params}

	var tools []Tool
	if root != "" {
		dir, err := realDir(root)
		if err != nil {
			return nil, err
		}
		e.root = dir
		tools = builtinTools(&sandbox{dir: dir, readCap: e.readCap})
	}
	for _, t := range append(tools, e.extra...) {
		if err := e.Register(t); err != nil {
			return nil, err
		}
	}
	e.extra = nil
	return e, nil
}

func realDir(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrBadRoot, root, unwrapPath(err))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrBadRoot, root, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %q is not a folder", ErrBadRoot, root)
	}
	return abs, nil
}

// Root returns the absolute root folder of the file tools, with symbolic
// links resolved, or "" when there are none.
func (e *Executor) Root() string { return e.root }

// Policy returns the policy the executor enforces.
func (e *Executor) Policy() categories.Policy { return e.policy }

// Taxonomy returns the executor's taxonomy, which holds every registered
// tool.
func (e *Executor) Taxonomy() *categories.Taxonomy { return e.tax }

// Status is whether a call ran.
type Status string

// The statuses of an [Observation].
const (
	StatusOK     Status = "ok"     // the tool ran and returned content
	StatusDenied Status = "denied" // refused: nothing ran, or the sandbox refused before touching anything
	StatusError  Status = "error"  // the tool ran (or started) and failed, timed out or panicked
)

// Observation is the result of one call, as data for the journal and as
// text for the next prompt ([Observation.Text]). A denial is an
// observation, not an error.
type Observation struct {
	// Tool is the name the call asked for, as given.
	Tool string `json:"tool"`
	// Category is the tool's category; empty for the index tool and for
	// unknown tools.
	Category categories.Category `json:"category,omitempty"`
	// ReadOnly says that the tool cannot change anything. False for
	// unknown tools.
	ReadOnly bool `json:"read_only"`
	// Status says whether the call ran; Reason says why not, or how it
	// failed (empty when Status is ok).
	Status Status `json:"status"`
	Reason Reason `json:"reason,omitempty"`
	// Content is the tool's output, or the denial or failure worded for a
	// model. At most the output cap plus a short truncation note.
	Content string `json:"content"`
	// Truncated says that Content was cut, by the output cap or by the
	// tool itself (a read cap, a result limit).
	Truncated bool `json:"truncated,omitempty"`
	// Healed lists the arguments that arrived as JSON in a string and
	// were decoded, for example "arguments.paths".
	Healed []string `json:"healed,omitempty"`
	// Duration is how long the check and the call took.
	Duration time.Duration `json:"duration_ns"`
}

// Denied reports whether the call was refused (Status denied).
func (o Observation) Denied() bool { return o.Status == StatusDenied }

// OK reports whether the tool ran and returned content.
func (o Observation) OK() bool { return o.Status == StatusOK }

// Err returns nil for an ok observation, otherwise an error whose message
// is Content and which wraps the sentinel of Reason ([ErrUnknownTool],
// [categories.ErrDenied] for not_allowed, [ErrOutsideRoot], fs.ErrNotExist
// for not_found, ...). It is derived from the fields alone, so it survives
// a JSON round trip.
func (o Observation) Err() error {
	if o.Status == StatusOK {
		return nil
	}
	if s, ok := reasonErr[o.Reason]; ok {
		return &reasonError{sentinel: s, msg: o.Content}
	}
	return &reasonError{sentinel: ErrToolFailed, msg: o.Content}
}

// Text is the observation as the next prompt shows it: one header line
// naming the tool and the outcome, then the content. It leaves out the
// duration, so equal calls give equal text.
func (o Observation) Text() string {
	switch o.Status {
	case StatusOK:
		if o.Content == "" {
			return fmt.Sprintf("Tool %q returned no output.", o.Tool)
		}
		return fmt.Sprintf("Tool %q returned:\n%s", o.Tool, o.Content)
	case StatusDenied:
		return fmt.Sprintf("Tool call %q was denied (%s): %s", o.Tool, o.Reason, o.Content)
	default:
		return fmt.Sprintf("Tool call %q failed (%s): %s", o.Tool, o.Reason, o.Content)
	}
}

// call is a checked call, ready to run.
type call struct {
	reg  *registered
	args map[string]any
}

// lookup returns the registered tool of name, the index tool included.
func (e *Executor) lookup(name string) *registered {
	if name == categories.IndexTool {
		return e.index
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.tools[name]
}

// ReadOnly reports whether a call of tool name can change nothing: true
// for registered read-only tools and the index tool; false for
// side-effect tools and for names this executor does not have (which
// cannot run anyway). The orchestrator journals a call as pending before
// running it when this is false. Cost: a map lookup.
func (e *Executor) ReadOnly(name string) bool {
	reg := e.lookup(name)
	return reg != nil && reg.entry.ReadOnly()
}

// Lookup returns the taxonomy entry of a registered tool (or of the index
// tool, with an empty category), and false for any other name.
func (e *Executor) Lookup(name string) (categories.Entry, bool) {
	reg := e.lookup(name)
	if reg == nil {
		return categories.Entry{}, false
	}
	return reg.entry, true
}

// Registered returns the names of the registered tools, in taxonomy order
// (by category, then name), without the index tool.
func (e *Executor) Registered() []string {
	var out []string
	for _, en := range e.tax.Tools() {
		if e.lookup(en.Name) != nil {
			out = append(out, en.Name)
		}
	}
	return out
}

// Loaded returns the tools a call may use: the registered tools the
// policy allows, in taxonomy order, then the index tool.
func (e *Executor) Loaded() []string {
	var out []string
	for _, name := range e.Registered() {
		if e.policy.Allows(e.lookup(name).entry) == nil {
			out = append(out, name)
		}
	}
	return append(out, categories.IndexTool)
}

// Check makes every check of [Executor.Execute] without running anything:
// the tool is registered, the policy allows it, its arguments heal and
// validate. It returns true and an observation with Tool, Category,
// ReadOnly and Healed set (Status ok, no content) when the call may run,
// otherwise false and the denial Execute would return. Path checks of the
// file tools happen only when they run. Safe for concurrent use.
func (e *Executor) Check(in intent.ToolIntent) (Observation, bool) {
	_, obs, ok := e.check(in)
	return obs, ok
}

func (e *Executor) check(in intent.ToolIntent) (call, Observation, bool) {
	obs := Observation{Tool: in.Tool, Status: StatusOK}
	reg := e.lookup(in.Tool)
	if reg == nil {
		obs.Status = StatusDenied
		if en, known := e.tax.Lookup(in.Tool); known {
			obs.Category = en.Category
			obs.Reason = ReasonUnavailable
			obs.Content = fmt.Sprintf("tool %q (category %s) is known but this build cannot run it; no --tools setting makes it run here. Tools you can call: %s.",
				in.Tool, en.Category, strings.Join(e.Loaded(), ", "))
		} else {
			obs.Reason = ReasonUnknownTool
			obs.Content = e.unknownMessage(in.Tool)
		}
		return call{}, obs, false
	}
	obs.Category = reg.entry.Category
	obs.ReadOnly = reg.entry.ReadOnly()
	if err := e.policy.Allows(reg.entry); err != nil {
		obs.Status, obs.Reason, obs.Content = StatusDenied, ReasonNotAllowed, err.Error()
		return call{}, obs, false
	}
	args, healed, probs := prepare(reg, in.Args)
	obs.Healed = healed
	if len(probs) > 0 {
		obs.Status, obs.Reason = StatusDenied, ReasonInvalidArgs
		obs.Content = invalidMessage(in.Tool, reg.doc, probs)
		return call{}, obs, false
	}
	return call{reg: reg, args: args}, obs, true
}

// unknownMessage words an unknown name: what can be called, and a hint
// when the name is a category or a near miss of a tool's name.
func (e *Executor) unknownMessage(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "there is no tool named %q. ", name)
	trimmed := strings.TrimSpace(name)
	switch {
	case categories.Category(trimmed).Valid():
		fmt.Fprintf(&b, "%q is a category, not a tool; %s lists the tools of each category. ", trimmed, categories.IndexTool)
	default:
		for _, en := range append(e.tax.Tools(), categories.Entry{Name: categories.IndexTool}) {
			if strings.EqualFold(trimmed, en.Name) {
				fmt.Fprintf(&b, "Did you mean %q? Tool names must match exactly. ", en.Name)
				break
			}
		}
	}
	loaded := e.Loaded()
	fmt.Fprintf(&b, "Tools you can call: %s.", strings.Join(loaded, ", "))
	if len(loaded)-1 < len(e.Registered()) {
		fmt.Fprintf(&b, " Other tools are withheld by this run's policy; call %s to see them and how an operator allows them.", categories.IndexTool)
	}
	return b.String()
}

// Execute checks the call (see [Executor.Check]) and, if it may, runs it
// under the per-call timeout with its panics recovered and its output
// capped.
//
// Every denial and every failure of the tool (an error, a timeout, a
// panic) is an [Observation] with a nil error. The error is non-nil only
// when ctx is cancelled or its deadline passes, before the call or during
// it without the tool completing; it wraps ctx.Err() and comes with an
// observation of reason cancelled (a side-effect tool may have acted). A
// tool that completed despite the cancellation gives its ok observation.
// A tool that ignores its context is abandoned shortly after the timeout:
// Execute returns, the tool's goroutine runs on. Safe for concurrent use.
func (e *Executor) Execute(ctx context.Context, in intent.ToolIntent) (Observation, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		obs := Observation{Tool: in.Tool, Status: StatusError, Reason: ReasonCancelled,
			Content: "the call was cancelled before it started; nothing ran"}
		return obs, fmt.Errorf("executor: %s: %w", in.Tool, err)
	}
	c, obs, ok := e.check(in)
	if !ok {
		obs.Duration = time.Since(start)
		e.log.Info("executor: call denied", "tool", in.Tool, "reason", string(obs.Reason), "content", obs.Content)
		return obs, nil
	}

	res := e.run(ctx, c)
	out, runErr, rec := res.out, res.err, res.rec
	obs.Duration = time.Since(start)
	if ctxErr := ctx.Err(); ctxErr != nil && (runErr != nil || rec != nil) {
		obs.Status, obs.Reason = StatusError, ReasonCancelled
		obs.Content = "the call was cancelled while it ran"
		if !obs.ReadOnly {
			obs.Content += "; the tool has side effects and may have acted"
		}
		e.log.Warn("executor: call cancelled", "tool", in.Tool, "err", ctxErr)
		return obs, fmt.Errorf("executor: %s: %w", in.Tool, ctxErr)
	}
	switch {
	case rec != nil:
		obs.Status, obs.Reason = StatusError, ReasonPanic
		out = fmt.Sprintf("the tool %s crashed (panic: %v); this is a fault of the tool, not of the call", in.Tool, rec.Value)
		e.log.Error("executor: tool panicked", "tool", in.Tool, "panic", fmt.Sprint(rec.Value), "stack", string(rec.Stack))
	case runErr != nil:
		obs.Status, obs.Reason = classify(runErr)
		out = runErr.Error()
		if obs.Reason == ReasonTimeout {
			out = fmt.Sprintf("the call did not finish within %s and was stopped", e.timeout)
			if !obs.ReadOnly {
				out += "; the tool has side effects and may have acted in part"
			}
			e.log.Warn("executor: call timed out", "tool", in.Tool, "timeout", e.timeout)
		} else {
			e.log.Info("executor: call failed", "tool", in.Tool, "reason", string(obs.Reason), "err", runErr)
		}
	default:
		e.log.Debug("executor: call ran", "tool", in.Tool, "bytes", len(out), "duration", obs.Duration)
	}
	obs.Content, obs.Truncated = capText(out, e.outputCap)
	obs.Truncated = obs.Truncated || res.truncated
	return obs, nil
}

// outcome is what a tool's run gave.
type outcome struct {
	out       string
	err       error
	rec       *panics.Recovered // non-nil when the tool panicked
	truncated bool              // the tool called MarkTruncated
}

// run runs a checked call in its own goroutine under the timeout.
func (e *Executor) run(ctx context.Context, c call) outcome {
	cctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	flag := new(atomic.Bool)
	cctx = context.WithValue(cctx, truncKey{}, flag)
	done := make(chan outcome, 1)
	go func() {
		var r outcome
		r.rec = panics.Try(func() { r.out, r.err = c.reg.tool.Run(cctx, c.args) })
		done <- r
	}()
	var r outcome
	select {
	case r = <-done:
	case <-cctx.Done():
		select {
		case r = <-done:
		case <-time.After(lateGrace):
			e.log.Warn("executor: tool ignored its context and was abandoned", "tool", c.reg.entry.Name)
			r.err = ErrTimeout
		}
	}
	if r.err != nil && r.rec == nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		r.err = fmt.Errorf("%w: %w", ErrTimeout, r.err)
	}
	r.truncated = flag.Load()
	return r
}

// capText cuts s to at most n bytes on a UTF-8 boundary and adds a note.
func capText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[output truncated: showing the first %d of %d bytes]", cut, len(s)), true
}

// available reports whether this executor can run tool name.
func (e *Executor) available(name string) bool { return e.lookup(name) != nil }

// appendNote adds a bracketed note on its own line.
func appendNote(s, note string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + note
}
