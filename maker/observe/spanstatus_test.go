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
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpanStatusesFollowTheConventions: a denied tool call is an error
// span (error.type denied), as the GenAI conventions ask of a tool call
// that did not succeed; a failed model call's status names no server,
// though the provider's error does.
func TestSpanStatusesFollowTheConventions(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := observe.Setup(context.Background(), observe.Config{SpanExporter: spans, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	defer tel.Shutdown(context.Background())
	w := tel.Observer()
	require.NotNil(t, w)

	_, end := w.StartTool(context.Background(), maker.ToolInfo{Step: 4, Intent: intent.ToolIntent{Tool: "write_file"}, Category: "file_write"})
	end(intent.Observation{Tool: "write_file", Status: intent.StatusDenied, Reason: "policy"}, nil)
	_, endCall := w.StartCall(context.Background(), maker.CallInfo{ID: maker.SampleID{Step: 1, Index: 2}})
	endCall(maker.CallResult{Err: errors.New("permanent provider error: openai:gpt at https://llm.example.com:8443/v1: HTTP 401 from POST https://llm.example.com:8443/v1/chat/completions")})
	tp, ok := tel.TracerProvider().(interface{ ForceFlush(context.Context) error })
	require.True(t, ok)
	require.NoError(t, tp.ForceFlush(context.Background()))

	got := spans.GetSpans()
	require.Len(t, got, 2)
	tool, call := got[0], got[1]
	assert.Equal(t, codes.Error, tool.Status.Code, "a denied tool call is an error span")
	assert.Equal(t, "denied", attrs(tool.Attributes)["error.type"].AsString())
	assert.Equal(t, "mdap-step-4", attrs(tool.Attributes)["gen_ai.tool.call.id"].AsString())
	assert.Equal(t, codes.Error, call.Status.Code)
	assert.NotContains(t, call.Status.Description, "llm.example.com", "no span carries a server address")
	assert.Contains(t, call.Status.Description, "HTTP 401", "the rest of the error stays")
}
