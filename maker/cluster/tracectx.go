package cluster

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// The W3C trace context (traceparent, tracestate) of a job travels in
// its message's headers, so that a worker's model call is a child of the
// coordinator's call span (see maker/observe). A job carrying a wave
// carries the trace context of the wave's first call: the worker's calls
// of the wave's other samples are children of that call's span (the same
// trace: the step's). With no propagator set
// (tracing off) no header is written and nothing is read.

// jobMsg is a job's message: data with the trace context of ctx, if any,
// in its headers.
func jobMsg(ctx context.Context, subject string, data []byte) *nats.Msg {
	m := &nats.Msg{Subject: subject, Data: data}
	carrier := propagation.HeaderCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if len(carrier) > 0 {
		m.Header = nats.Header(carrier)
	}
	return m
}

// traceContext returns ctx continuing the trace context of a job's
// headers, if they carry one.
func traceContext(ctx context.Context, h nats.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(h))
}
