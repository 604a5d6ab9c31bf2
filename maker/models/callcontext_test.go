package models

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestCallContextPrintsAsAValueContext: withCall's context prints as the
// context.WithValue it replaced (the key's and value's types, not the
// call), so printing a context (a log line, a test's message) neither
// reads the call while the transport writes it, a race, nor shows what
// the call saw (its URL, its response headers).
func TestCallContextPrintsAsAValueContext(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	defer cancel()
	ctx, c := withCall(parent)
	assert.Equal(t, fmt.Sprint(context.WithValue(parent, callKey{}, &call{})), fmt.Sprint(ctx))
	assert.Equal(t, fmt.Sprint(context.WithValue(parent, callKey{}, &call{}))+".WithCancel", fmt.Sprint(must(context.WithCancel(ctx))))

	var wg sync.WaitGroup
	wg.Go(func() {
		for range 100 {
			c.mu.Lock()
			c.url = &url.URL{Scheme: "http", Host: "secret.example", Path: "/v1"}
			c.header = http.Header{"X-Seen": {"1"}}
			c.mu.Unlock()
		}
	})
	for range 100 {
		assert.NotContains(t, fmt.Sprintf("%v %+v", ctx, ctx), "secret.example")
	}
	wg.Wait()
}

func must(ctx context.Context, cancel context.CancelFunc) context.Context {
	cancel()
	return ctx
}

// TestCallContextKeepsItsParentsDeadlineAndCancellation: withCall's doc
// says Done, Err, Deadline and every other value are its parent's:
// the parent's deadline is its own and ends it with the parent's cause,
// context.AfterFunc on it runs once the parent ends, and
// context.WithoutCancel of it keeps the call but not the cancellation.
func TestCallContextKeepsItsParentsDeadlineAndCancellation(t *testing.T) {
	at := time.Now().Add(50 * time.Millisecond)
	timeout := errors.New("the step's time is up")
	parent, cancel := context.WithDeadlineCause(context.Background(), at, timeout)
	defer cancel()
	ctx, c := withCall(parent)
	deadline, ok := ctx.Deadline()
	assert.True(t, ok)
	assert.Equal(t, at, deadline)

	ran := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(ran) })
	defer stop()
	detached := context.WithoutCancel(ctx)
	assert.Same(t, c, detached.Value(callKey{}).(*call))
	child, cancelChild := context.WithTimeout(ctx, time.Hour)
	defer cancelChild()
	childDeadline, _ := child.Deadline()
	assert.Equal(t, at, childDeadline, "a longer timeout under it keeps the parent's deadline")

	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc did not run when the parent's deadline passed")
	}
	<-child.Done()
	assert.Equal(t, context.DeadlineExceeded, ctx.Err())
	assert.Equal(t, timeout, context.Cause(ctx))
	assert.Equal(t, timeout, context.Cause(child))
	assert.NoError(t, detached.Err())
	assert.Nil(t, detached.Done())
}

// TestWithCallIsAValueContext: withCall's context carries its call and
// every value, deadline and cancellation of its parent; a context
// derived from it is cancelled with the parent without a goroutine of
// its own (as from context.WithValue's); and it is one allocation, the
// call with the context.
func TestWithCallIsAValueContext(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), key{}, "v"))
	ctx, c := withCall(parent)
	assert.Same(t, c, ctx.Value(callKey{}).(*call))
	assert.Equal(t, "v", ctx.Value(key{}))
	_, hasDeadline := ctx.Deadline()
	assert.False(t, hasDeadline)

	before := runtime.NumGoroutine()
	var children []context.Context
	for range 50 {
		child, stop := context.WithCancel(ctx)
		defer stop()
		children = append(children, child)
	}
	assert.Less(t, runtime.NumGoroutine()-before, 10, "a goroutine per derived context")
	cause := errors.New("stop")
	cancel(cause)
	for _, child := range children {
		<-child.Done()
		assert.Equal(t, cause, context.Cause(child))
	}
	assert.Equal(t, context.Canceled, ctx.Err())

	allocs := testing.AllocsPerRun(100, func() { _, _ = withCall(parent) })
	assert.LessOrEqual(t, allocs, 1.0)
}
