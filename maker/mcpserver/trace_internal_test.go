package mcpserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestRunTaskContinuesTheCallersTrace: a traceparent in the request's
// _meta, or else in its HTTP headers, is the parent of the run.
func TestRunTaskContinuesTheCallersTrace(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	const tp = "00-0102030405060708090a0b0c0d0e0f10-0102030405060708-01"
	const tp2 = "00-1112131415161718191a1b1c1d1e1f20-1112131415161718-01"

	meta := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: mcp.Meta{"traceparent": tp}},
		Extra: &mcp.RequestExtra{Header: http.Header{"Traceparent": {tp2}}}}
	sc := trace.SpanContextFromContext(callerTrace(context.Background(), meta))
	assert.Equal(t, "0102030405060708090a0b0c0d0e0f10", sc.TraceID().String(), "_meta first")
	assert.Equal(t, "0102030405060708", sc.SpanID().String())

	header := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{}, Extra: &mcp.RequestExtra{Header: http.Header{"Traceparent": {tp2}}}}
	assert.Equal(t, "1112131415161718191a1b1c1d1e1f20", trace.SpanContextFromContext(callerTrace(context.Background(), header)).TraceID().String())

	assert.False(t, trace.SpanContextFromContext(callerTrace(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{}})).IsValid())
	assert.False(t, trace.SpanContextFromContext(callerTrace(context.Background(), nil)).IsValid())
}
