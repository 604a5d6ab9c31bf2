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
	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpanStatusesFollowTheConventions: a denied tool call is an error
// span (error.type denied), as the GenAI conventions ask of a tool call
// that did not succeed; a failed model call's status names no server,
// though the provider's error does; an answered call carries the
// response's id, model and reasoning tokens when its model reported them.
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
	_, endOK := w.StartCall(context.Background(), maker.CallInfo{ID: maker.SampleID{Step: 1, Index: 3}})
	endOK(maker.CallResult{Response: &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "x", StopReason: "stop",
		GenerationInfo: map[string]any{maker.InfoResponseID: "chatcmpl-1", maker.InfoResponseModel: "gpt-test-2025", "ReasoningTokens": 7, "CompletionTokens": 9, "PromptTokens": 3}}}}})
	tp, ok := tel.TracerProvider().(interface{ ForceFlush(context.Context) error })
	require.True(t, ok)
	require.NoError(t, tp.ForceFlush(context.Background()))

	got := spans.GetSpans()
	require.Len(t, got, 3)
	tool, call, answered := got[0], got[1], attrs(got[2].Attributes)
	assert.Equal(t, "chatcmpl-1", answered["gen_ai.response.id"].AsString())
	assert.Equal(t, "gpt-test-2025", answered["gen_ai.response.model"].AsString())
	assert.EqualValues(t, 7, answered["gen_ai.usage.reasoning.output_tokens"].AsInt64())
	assert.Equal(t, codes.Error, tool.Status.Code, "a denied tool call is an error span")
	assert.Equal(t, "denied", attrs(tool.Attributes)["error.type"].AsString())
	assert.Equal(t, "mdap-step-4", attrs(tool.Attributes)["gen_ai.tool.call.id"].AsString())
	assert.Equal(t, codes.Error, call.Status.Code)
	assert.NotContains(t, call.Status.Description, "llm.example.com", "no span carries a server address")
	assert.Contains(t, call.Status.Description, "HTTP 401", "the rest of the error stays")
}

// TestGenAIClientHistograms: the GenAI client histograms have the bucket
// boundaries the conventions give, and gen_ai.client.token.usage records
// each answered call's input and output tokens under gen_ai.token.type.
func TestGenAIClientHistograms(t *testing.T) {
	rep, _, reader, _ := watched(t)
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	hists := map[string]metricdata.Histogram[int64]{}
	var duration metricdata.Histogram[float64]
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[int64]:
				hists[m.Name] = d
			case metricdata.Histogram[float64]:
				if m.Name == observe.MetricCallDuration {
					duration = d
				}
			}
		}
	}
	require.NotEmpty(t, duration.DataPoints)
	assert.Equal(t, []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}, duration.DataPoints[0].Bounds)
	usage, ok := hists[observe.MetricTokenUsage]
	require.True(t, ok, "no %s histogram", observe.MetricTokenUsage)
	sums := map[string]int64{}
	for _, p := range usage.DataPoints {
		assert.Equal(t, []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}, p.Bounds)
		typ, _ := p.Attributes.Value("gen_ai.token.type")
		sums[typ.AsString()] += p.Sum
		assert.EqualValues(t, rep.Launched-rep.Errors, p.Count, "one record per answered call")
	}
	assert.Equal(t, map[string]int64{"input": int64(rep.Usage.InputTokens), "output": int64(rep.Usage.OutputTokens)}, sums)
}

// hangingModel answers no call: each waits for its context.
type hangingModel struct{ started chan struct{} }

func (m hangingModel) GenerateContent(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	select {
	case m.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (m hangingModel) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// TestAHungRunShowsZeroSteps: a run whose every call hangs decides no
// first step; its mdap_steps_total{result="decided"} is served at 0 (a
// series that does not exist cannot show a stall to an alert), and
// mdap_runs_active is 1 while it runs and 0 once it ended, so a process
// lingering after its run is not taken for a stalled one.
func TestAHungRunShowsZeroSteps(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	tel, err := observe.Setup(context.Background(), observe.Config{MetricReader: reader, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	defer tel.Shutdown(context.Background())
	m := hangingModel{started: make(chan struct{}, 1)}
	s := &maker.Solver{Observer: tel.SolverObserver(), Model: m}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Solve(ctx, &counter{target: 4})
		done <- err
	}()
	<-m.started
	during := collect(t, reader)
	assert.Contains(t, during[observe.MetricSteps], "result=decided", "the series exists before a first step")
	assert.EqualValues(t, 0, during[observe.MetricSteps]["result=decided"])
	assert.EqualValues(t, 1, during[observe.MetricRunsActive][""])
	cancel()
	require.Error(t, <-done)
	assert.EqualValues(t, 0, collect(t, reader)[observe.MetricRunsActive][""], "the run ended")
}
