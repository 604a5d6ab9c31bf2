package models

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCallContextShowsNothingOfTheCall: printing a call's context (a log
// line, a test's message) neither reads the call while the transport
// writes it, a race, nor shows what the call saw (its URL, its response
// headers): the value context prints the call's type only.
func TestCallContextShowsNothingOfTheCall(t *testing.T) {
	ctx, c := withCall(context.Background())
	assert.Same(t, c, ctx.Value(callKey{}).(*call))
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 100 {
			c.mu.Lock()
			c.url = "http://secret.example/v1"
			c.header = http.Header{"X-Seen": {"1"}}
			c.mu.Unlock()
		}
	})
	for range 100 {
		assert.NotContains(t, fmt.Sprintf("%v %+v", ctx, ctx), "secret.example")
	}
	wg.Wait()
}
