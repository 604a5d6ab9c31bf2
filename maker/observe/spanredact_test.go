package observe_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A span's error status carries the error's text to the trace collector:
// a key a model server echoed in its error is replaced there too, in
// every form, and a key added after Setup (a --model ;key=VAR read
// later) as well.
func TestSpanStatusesCarryNoSecret(t *testing.T) {
	const key = `sk-a"b<c-echoed-9f3e`
	var sec observe.Secrets
	spans := tracetest.NewInMemoryExporter()
	tel, err := observe.Setup(context.Background(), observe.Config{SpanExporter: spans, Getenv: func(string) string { return "" }, Secrets: &sec})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	sec.Add(key)
	w := tel.Observer()
	refused := errors.New("HTTP 401: Incorrect API key provided: Bearer " + key)
	ctx, endRun := w.StartRun(context.Background(), maker.RunInfo{Models: []string{"openai:gpt-x"}, K: 1})
	sctx, endStep := w.StartStep(ctx, 0)
	_, endCall := w.StartCall(sctx, maker.CallInfo{})
	endCall(maker.CallResult{Err: refused})
	_, endTool := w.StartTool(sctx, maker.ToolInfo{Intent: intent.ToolIntent{Tool: "read_file"}})
	endTool(intent.Observation{}, refused)
	endStep(nil, nil, refused)
	endRun(nil, refused)
	got := spans.GetSpans()
	require.Len(t, got, 4)
	for _, s := range got {
		assert.Equal(t, "HTTP 401: Incorrect API key provided: Bearer [REDACTED]", s.Status.Description, s.Name)
	}
}
