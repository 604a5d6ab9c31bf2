package models

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

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
