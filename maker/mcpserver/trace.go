package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// callerTrace returns ctx continuing the caller's trace, when the request
// carries one: the W3C traceparent (and tracestate, baggage) in the
// request's _meta, as OpenTelemetry's MCP conventions carry it, or else in
// the HTTP request's headers. With tracing off (no propagator set) it
// reads nothing.
func callerTrace(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	if req.Params != nil {
		for _, k := range []string{"traceparent", "tracestate", "baggage"} {
			if v, ok := req.Params.GetMeta()[k].(string); ok && v != "" {
				carrier[k] = v
			}
		}
	}
	if len(carrier) > 0 {
		return otel.GetTextMapPropagator().Extract(ctx, carrier)
	}
	if req.Extra != nil && len(req.Extra.Header) > 0 {
		return otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(req.Extra.Header))
	}
	return ctx
}
