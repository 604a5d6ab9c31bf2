package maker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// stepContext is a step's race context: what context.WithCancelCause of
// the step's context gives (its values, deadline and cancellation,
// cancelled early with a cause by the step's draws, on a panic in Decode
// or a permanent provider error, and at the step's end), made only when
// it is needed. Until something asks for its Done channel or cancels it,
// no context of its own exists and nothing is registered with the
// parent: Err and Value are the parent's. An inline race (a synchronous
// model, or one sample at a time) asks neither, so most steps of such a
// run cost one small allocation instead of a cancel context, its cancel
// function and its registration with a cancellable parent. After the
// step's end it reports what the cancelled context would (Err,
// context.Cause, a closed Done): TestStepContextIsWithCancelCause.
type stepContext struct {
	parent context.Context
	made   atomic.Pointer[madeContext]
	mu     sync.Mutex // serialises making it and ending the step
	// ended is set when the step ends before its context was made.
	ended atomic.Pointer[endState]
}

// madeContext is the context a stepContext stands for, once made.
type madeContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// endState is how a step's unmade context ended: by the step's end
// (own: context.Canceled), or with its parent, already done.
type endState struct {
	err error
	own bool
}

// endedOwn is the end of a step whose parent was live: no allocation.
var endedOwn = &endState{err: context.Canceled, own: true}

// cancelledCtx is a context cancelled without a cause: after an own end,
// its cancellation is the step's, as context.Cause reads it.
var cancelledCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

var _ context.Context = (*stepContext)(nil)

func newStepContext(parent context.Context) *stepContext {
	return &stepContext{parent: parent}
}

// make returns the step's own cancel context, making it on first use:
// after the step's end, made cancelled as it ended.
func (c *stepContext) make() *madeContext {
	if m := c.made.Load(); m != nil {
		return m
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.made.Load(); m != nil {
		return m
	}
	parent := c.parent
	e := c.ended.Load()
	if e != nil && e.own {
		parent = context.WithoutCancel(parent) // its values; the cancellation is the end's
	}
	ctx, cancel := context.WithCancelCause(parent)
	if e != nil {
		cancel(nil)
	}
	m := &madeContext{ctx, cancel}
	c.made.Store(m)
	return m
}

// Deadline is the parent's.
func (c *stepContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done makes the step's context and returns its channel.
func (c *stepContext) Done() <-chan struct{} { return c.make().ctx.Done() }

// Err is the made context's error, or, before it is made, the parent's
// (after the step's end, as the end left it).
func (c *stepContext) Err() error {
	if m := c.made.Load(); m != nil {
		return m.ctx.Err()
	}
	if e := c.ended.Load(); e != nil {
		return e.err
	}
	return c.parent.Err()
}

// Value is the made context's value for key (so context.Cause sees the
// step's cancellation), or, before it is made, the parent's (after the
// step's own end, context.Cause sees context.Canceled).
func (c *stepContext) Value(key any) any {
	if m := c.made.Load(); m != nil {
		return m.ctx.Value(key)
	}
	if e := c.ended.Load(); e != nil && e.own {
		if v := cancelledCtx.Value(key); v != nil {
			return v
		}
	}
	return c.parent.Value(key)
}

// cancel cancels the step's race with cause, as a CancelCauseFunc does.
func (c *stepContext) cancel(cause error) { c.make().cancel(cause) }

// cause is context.Cause of the step's context.
func (c *stepContext) cause() error { return context.Cause(c) }

// end cancels the step's context, as the deferred cancel of
// context.WithCancelCause does.
func (c *stepContext) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.made.Load(); m != nil {
		m.cancel(nil)
		return
	}
	if c.ended.Load() != nil {
		return // ended already, as a cancel func called twice
	}
	if err := c.parent.Err(); err != nil {
		c.ended.Store(&endState{err: err})
		return
	}
	c.ended.Store(endedOwn)
}
