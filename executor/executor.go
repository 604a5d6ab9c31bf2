package executor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/sourcegraph/conc/panics"
)

// lateGrace is how long Execute still waits, after the timeout fired, for a
// tool that honours its context to return what actually happened.
const lateGrace = 100 * time.Millisecond

// Executor checks and runs tool calls. Build one with [New]; the zero value
// is not usable. An Executor is safe for concurrent use. With a root it
// holds that folder open until [Executor.Close].
type Executor struct {
	ws        Workspace // nil when there are no file tools
	policy    categories.Policy
	timeout   time.Duration
	outputCap int
	tax       *categories.Taxonomy
	log       *slog.Logger
	extra     []Tool

	maxAbandoned int
	abandoned    atomic.Int64 // goroutine tool calls still running after Execute gave up on them

	mu    sync.RWMutex
	tools map[string]*registered
	index *registered
}

// New returns an executor. With [WithWorkspace] it registers the
// workspace's tools (see the package doc's File tools); without, it has
// none, only the index tool and what WithTools or Register add.
//
// Errors: the errors of [Executor.Register] when a tool cannot be
// registered (for example a taxonomy given with WithTaxonomy that places
// read_file in another category); the workspace is closed then.
func New(opts ...Option) (*Executor, error) {
	e := &Executor{
		policy:       categories.DefaultPolicy(),
		timeout:      DefaultTimeout,
		outputCap:    DefaultOutputCap,
		maxAbandoned: DefaultMaxAbandoned,
		log:          slog.New(slog.DiscardHandler),
		tools:        map[string]*registered{},
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
		_ = e.Close()
		return nil, fmt.Errorf("%w: index tool: %v", ErrInvalidSchema, err) // a bug in this package
	}
	e.index = &registered{tool: idx, entry: categories.Entry{Name: categories.IndexTool}, schema: sch, doc: doc, params: params, inline: true}

	var tools []Tool
	if e.ws != nil {
		tools = e.ws.Tools()
	}
	for _, t := range append(tools, e.extra...) {
		if err := e.Register(t); err != nil {
			_ = e.Close()
			return nil, err
		}
	}
	e.extra = nil
	return e, nil
}

// Root returns the workspace's root folder ([Workspace].Root: for
// executor/fstools, absolute, with symbolic links resolved), or "" without
// a workspace.
func (e *Executor) Root() string {
	if e.ws == nil {
		return ""
	}
	return e.ws.Root()
}

// Close closes the workspace ([Workspace].Close: for executor/fstools, it
// releases the root folder, and afterwards the file tools fail with
// intent.ReasonToolError, saying the executor was closed); the index tool
// and registered tools of your own still run. Calls running during Close
// finish or fail cleanly. It returns nil without a workspace, and the
// workspace's error otherwise; the workspace's Close must be idempotent
// and safe for concurrent use (fstools' is, and only its first call can
// fail).
func (e *Executor) Close() error {
	if e.ws == nil {
		return nil
	}
	return e.ws.Close()
}

// Policy returns the policy the executor enforces.
func (e *Executor) Policy() categories.Policy { return e.policy }

// Taxonomy returns the executor's taxonomy, which holds every registered
// tool.
func (e *Executor) Taxonomy() *categories.Taxonomy { return e.tax }

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
func (e *Executor) Check(in intent.ToolIntent) (intent.Observation, bool) {
	_, obs, ok := e.check(in)
	return obs, ok
}

func (e *Executor) check(in intent.ToolIntent) (call, intent.Observation, bool) {
	obs := intent.Observation{Tool: in.Tool, Status: intent.StatusOK}
	deny := func(r intent.Reason, content string) (call, intent.Observation, bool) {
		obs.Status, obs.Reason = intent.StatusDenied, r
		obs.Content, obs.Truncated = capText(content, e.outputCap)
		return call{}, obs, false
	}
	if len(in.Tool) > MaxToolNameBytes {
		obs.Tool = cutText(in.Tool, MaxToolNameBytes)
		return deny(intent.ReasonUnknownTool, fmt.Sprintf("there is no tool named %q (a name of %d bytes; tool names are at most %d bytes). Tools you can call: %s.",
			cutText(in.Tool, 64), len(in.Tool), MaxToolNameBytes, strings.Join(e.Loaded(), ", ")))
	}
	reg := e.lookup(in.Tool)
	if reg == nil {
		if en, known := e.tax.Lookup(in.Tool); known {
			obs.Category = en.Category
			return deny(intent.ReasonUnavailable, fmt.Sprintf("tool %q (category %s) is known but this build cannot run it; no --tools setting makes it run here. Tools you can call: %s.",
				in.Tool, en.Category, strings.Join(e.Loaded(), ", ")))
		}
		return deny(intent.ReasonUnknownTool, e.unknownMessage(in.Tool))
	}
	obs.Category = reg.entry.Category
	obs.ReadOnly = reg.entry.ReadOnly()
	if err := e.policy.Allows(reg.entry); err != nil {
		return deny(intent.ReasonNotAllowed, err.Error())
	}
	args, healed, probs := e.prepare(reg, in.Args)
	obs.Healed = healed
	if len(probs) > 0 {
		return deny(intent.ReasonInvalidArgs, invalidMessage(in.Tool, reg.doc, probs))
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
// panic) is an [intent.Observation] with a nil error. The error is non-nil only
// when ctx is cancelled or its deadline passes, before the call or during
// it without the tool completing; it wraps ctx.Err() and comes with an
// observation of reason cancelled (a side-effect tool may have acted). A
// tool that completed despite the cancellation gives its ok observation.
//
// A [ContextBound] tool (executor/fstools' are) runs on the caller's
// goroutine; every loop in it checks the context or is bounded by
// construction, so a call returns soon after its timeout and leaves
// nothing running.
// A registered tool runs on a goroutine of its own: if it ignores its
// context it is abandoned shortly after the timeout (Execute returns, the
// goroutine runs on), and while [WithMaxAbandoned] of them are still
// running, calls of registered tools are refused without starting. Safe
// for concurrent use.
func (e *Executor) Execute(ctx context.Context, in intent.ToolIntent) (intent.Observation, error) {
	start := time.Now()
	name := cutText(in.Tool, MaxToolNameBytes) // for logs and errors, as in the observation
	if err := ctx.Err(); err != nil {
		obs := intent.Observation{Tool: name, Status: intent.StatusError, Reason: intent.ReasonCancelled,
			Content: "the call was cancelled before it started; nothing ran"}
		return obs, fmt.Errorf("executor: %s: %w", name, err)
	}
	c, obs, ok := e.check(in)
	if !ok {
		obs.Duration = time.Since(start)
		e.log.Info("executor: call denied", "tool", name, "reason", string(obs.Reason), "content", obs.Content)
		return obs, nil
	}

	res := e.run(ctx, c)
	out, runErr, rec := res.out, res.err, res.rec
	obs.Duration = time.Since(start)
	if ctxErr := ctx.Err(); ctxErr != nil && (runErr != nil || rec != nil) {
		obs.Status, obs.Reason = intent.StatusError, intent.ReasonCancelled
		obs.Content = "the call was cancelled while it ran"
		if !obs.ReadOnly {
			obs.Content += "; the tool has side effects and may have acted"
		}
		e.log.Warn("executor: call cancelled", "tool", name, "err", ctxErr)
		return obs, fmt.Errorf("executor: %s: %w", name, ctxErr)
	}
	switch {
	case rec != nil:
		obs.Status, obs.Reason = intent.StatusError, intent.ReasonPanic
		out = fmt.Sprintf("the tool %s crashed (panic: %v); this is a fault of the tool, not of the call", name, rec.Value)
		e.log.Error("executor: tool panicked", "tool", name, "panic", fmt.Sprint(rec.Value), "stack", string(rec.Stack))
	case runErr != nil:
		obs.Status, obs.Reason = classify(runErr)
		out = runErr.Error()
		if obs.Reason == intent.ReasonTimeout {
			out = fmt.Sprintf("the call did not finish within %s and was stopped", e.timeout)
			if !obs.ReadOnly {
				out += "; the tool has side effects and may have acted in part"
			}
			e.log.Warn("executor: call timed out", "tool", name, "timeout", e.timeout)
		} else {
			e.log.Info("executor: call failed", "tool", name, "reason", string(obs.Reason), "err", runErr)
		}
	default:
		e.log.Debug("executor: call ran", "tool", name, "bytes", len(out), "duration", obs.Duration)
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

// run runs a checked call under the timeout: a [ContextBound] tool
// (inline) on the caller's goroutine, any other on its own, abandoned past
// lateGrace and refused while maxAbandoned are (see Execute).
func (e *Executor) run(ctx context.Context, c call) outcome {
	cctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	flag := new(atomic.Bool)
	cctx = context.WithValue(cctx, truncKey{}, flag)
	var r outcome
	if c.reg.inline {
		r.rec = panics.Try(func() { r.out, r.err = c.reg.tool.Run(cctx, c.args) })
	} else {
		if n := e.abandoned.Load(); n >= int64(e.maxAbandoned) {
			return outcome{err: fmt.Errorf("the call was not started: %d earlier calls of tools that ignored their timeout are still running (at most %d may be); try again later", n, e.maxAbandoned)}
		}
		r = e.runAsync(cctx, c)
	}
	if r.err != nil && r.rec == nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		r.err = fmt.Errorf("%w: %w", ErrTimeout, r.err)
	}
	r.truncated = flag.Load()
	return r
}

// Flight states of a goroutine tool call.
const (
	flightRunning int32 = iota
	flightDone
	flightAbandoned
)

// runAsync runs c on its own goroutine. The goroutine ends when the tool
// returns; if Execute stopped waiting for it first, it was counted in
// e.abandoned and uncounts itself then.
func (e *Executor) runAsync(cctx context.Context, c call) outcome {
	done := make(chan outcome, 1)
	var state atomic.Int32
	go func() {
		var r outcome
		r.rec = panics.Try(func() { r.out, r.err = c.reg.tool.Run(cctx, c.args) })
		done <- r
		if !state.CompareAndSwap(flightRunning, flightDone) {
			e.abandoned.Add(-1) // Execute gave up on this call
		}
	}()
	select {
	case r := <-done:
		return r
	case <-cctx.Done():
	}
	select {
	case r := <-done:
		return r
	case <-time.After(lateGrace):
	}
	if state.CompareAndSwap(flightRunning, flightAbandoned) {
		e.abandoned.Add(1)
		e.log.Warn("executor: tool ignored its context and was abandoned", "tool", c.reg.entry.Name)
		return outcome{err: ErrTimeout}
	}
	return <-done // it finished just now
}

// capText cuts s to at most n bytes on a UTF-8 boundary and adds a note.
func capText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	kept := words.Prefix(s, n)
	return kept + fmt.Sprintf("\n[output truncated: showing the first %d of %d bytes]", len(kept), len(s)), true
}

// available reports whether this executor can run tool name.
func (e *Executor) available(name string) bool { return e.lookup(name) != nil }
