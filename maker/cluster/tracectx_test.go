package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestTraceContextCrossesNATS: a worker's model call runs under the
// coordinator's trace (W3C traceparent in the job's headers), on a server
// without roles and through the engine's agent on one with them.
func TestTraceContextCrossesNATS(t *testing.T) {
	t.Parallel()
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })

	var mu sync.Mutex
	var seen []trace.SpanContext
	model := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		mu.Lock()
		seen = append(seen, trace.SpanContextFromContext(ctx))
		mu.Unlock()
		return maker.TextResponse("ok", "stop"), nil
	})
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	_, wjs := connect(t, srv.ClientURL())
	runWorker(t, newWorker(t, wjs, model, cluster.WorkerConfig{Route: "traced"}))
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model("traced")
	require.NoError(t, err)
	// On a server with roles, where the engine's agent forwards each
	// job to its worker with the headers it keeps (forwardedHeaders).
	a := newRouteAttack(t, model, cluster.WorkerConfig{})
	_, viaAgent := a.victim(t)

	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), parent)
	for _, m := range []llms.Model{remote, viaAgent} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		_, err = m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
		require.NoError(t, err)
		_, err = m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
		require.NoError(t, err)

		mu.Lock()
		require.Len(t, seen, 2)
		assert.Equal(t, parent.TraceID(), seen[0].TraceID(), "the worker continues the coordinator's trace")
		assert.Equal(t, parent.SpanID(), seen[0].SpanID(), "under the caller's span")
		assert.True(t, seen[0].IsRemote())
		assert.False(t, seen[1].IsValid(), "no trace, no context")
		mu.Unlock()
	}
}
