package observe_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestRemoteCallIsCountedOnce: over the NATS engine a worker makes the
// provider call and reports it (its own "chat" client span, its token
// histograms); the coordinator's observation of the same call
// (CallInfo.Remote) is a span of the wait for the reply, with no GenAI
// operation and no token counts, and records no GenAI client metric, so
// that a backend summing a trace's or a metric's tokens counts each call
// once.
func TestRemoteCallIsCountedOnce(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel, err := observe.Setup(context.Background(), observe.Config{SpanExporter: spans, MetricReader: reader, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	defer tel.Shutdown(context.Background())
	w := tel.Observer()
	answer := maker.CallResult{Response: &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "x", StopReason: "stop",
		GenerationInfo: map[string]any{"CompletionTokens": 9, "PromptTokens": 3}}}}}
	_, end := w.StartCall(context.Background(), maker.CallInfo{ID: maker.SampleID{Step: 1, Index: 0}, Remote: true})
	end(answer)
	tp, ok := tel.TracerProvider().(interface{ ForceFlush(context.Context) error })
	require.True(t, ok)
	require.NoError(t, tp.ForceFlush(context.Background()))

	got := spans.GetSpans()
	require.Len(t, got, 1)
	span := got[0]
	assert.False(t, strings.HasPrefix(span.Name, "chat"), "not a GenAI chat span: %s", span.Name)
	assert.Equal(t, trace.SpanKindClient, span.SpanKind, "a request to the engine")
	for _, kv := range span.Attributes {
		assert.False(t, strings.HasPrefix(string(kv.Key), "gen_ai."), "the worker's span carries %s, not this one", kv.Key)
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if !strings.HasPrefix(m.Name, "gen_ai.client.") {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					assert.Zero(t, p.Count, "%s: the worker records the call", m.Name)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					assert.Zero(t, p.Count, "%s: the worker records the call", m.Name)
				}
			}
		}
	}
}
