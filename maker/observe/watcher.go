package observe

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/tmc/langchaingo/llms"
)

// Span names and the mdap attributes of the spans (the model calls' are
// the GenAI conventions' gen_ai.*).
const (
	SpanRun   = "maker.run"
	SpanStep  = "maker.step"
	SpanTool  = "execute_tool" // gen_ai.operation.name execute_tool, then the tool's name
	SpanBatch = "maker.batch"
	SpanJob   = "maker.worker.job"

	AttrStep          = "mdap.step.index"
	AttrK             = "mdap.step.k"
	AttrSamples       = "mdap.step.samples"
	AttrValid         = "mdap.step.valid"
	AttrFlagged       = "mdap.step.flagged"
	AttrErrors        = "mdap.step.errors"
	AttrCancelled     = "mdap.step.cancelled"
	AttrRedFlagPrefix = "mdap.step.red_flags." // then the reason: mdap.step.red_flags.cut_off
	AttrWinnerKey     = "mdap.step.winner.key"
	AttrWinnerVotes   = "mdap.step.winner.votes"
	AttrRunnerUpVotes = "mdap.step.runner_up.votes"
	AttrSplit         = "mdap.step.split"
	AttrContested     = "mdap.step.contested"
	AttrEscalated     = "mdap.step.escalated"
	AttrToolCalled    = "mdap.step.tool"
	AttrSampleStep    = "mdap.sample.step"
	AttrSampleIndex   = "mdap.sample.index"
	AttrToolCategory  = "mdap.tool.category"
	AttrToolStatus    = "mdap.tool.status" // ok, denied, error
	AttrToolAllowed   = "mdap.tool.allowed"
	AttrToolReason    = "mdap.tool.reason"
	AttrModels        = "mdap.run.models"
	AttrRunK          = "mdap.run.k"
	AttrRunSteps      = "mdap.run.steps"
	AttrRunSamples    = "mdap.run.samples"
	AttrRunCost       = "mdap.run.cost_dollars"
	AttrRunDone       = "mdap.run.done"
)

// Watcher is the maker.Observer of a Telemetry: it makes the spans (when
// tracing is on) and records the metrics (when metrics are on). Safe for
// concurrent use by any number of Solvers at once (a batch's tasks).
type Watcher struct {
	tracer  trace.Tracer
	tracing bool
	m       *instruments // nil with metrics off
	sec     *Secrets     // Config.Secrets: kept out of the spans; may be nil
}

var _ maker.Observer = (*Watcher)(nil)

func newWatcher(tr trace.Tracer, tracing bool, meter metric.Meter, sec *Secrets) (*Watcher, error) {
	w := &Watcher{tracer: tr, tracing: tracing, sec: sec}
	if meter != nil {
		m, err := newInstruments(meter)
		if err != nil {
			return nil, err
		}
		w.m = m
	}
	return w, nil
}

// SolverObserver is the observer to give a Solver when it is built
// (maker.Solver.Observer): t's Watcher, or nil, not a nil *Watcher, when
// nothing is watched (or t is nil), so that an unwatched run pays
// nothing. Cost: none.
func (t *Telemetry) SolverObserver() maker.Observer {
	if w := t.Observer(); w != nil {
		return w
	}
	return nil
}

// runState is a run's information, carried in the context to its steps
// and calls (a Watcher serves many runs at once).
type runState struct {
	info  maker.RunInfo
	wrong func() int // the task's wrong steps, where an oracle knows
	seen  int        // wrong steps already counted
}

type runKey struct{}

func runOf(ctx context.Context) *runState {
	r, _ := ctx.Value(runKey{}).(*runState)
	return r
}

// Oracle is implemented by tasks that know how many of their decided
// steps were wrong (maker/hanoi); a Watcher counts them in
// mdap_steps_wrong_total.
type Oracle interface{ WrongSteps() int }

// WithOracle returns a context under which a run's wrong steps are read
// from o after each step.
func WithOracle(ctx context.Context, o Oracle) context.Context {
	return context.WithValue(ctx, oracleKey{}, o)
}

type oracleKey struct{}

// StartRun starts the run's span.
func (w *Watcher) StartRun(ctx context.Context, info maker.RunInfo) (context.Context, func(*maker.Report, error)) {
	rs := &runState{info: info}
	if o, ok := ctx.Value(oracleKey{}).(Oracle); ok {
		rs.wrong = o.WrongSteps
	}
	ctx = context.WithValue(ctx, runKey{}, rs)
	ended := func() {}
	if w.m != nil {
		w.m.k.Record(ctx, int64(info.K))
		ended = w.m.runStarted(ctx)
	}
	if !w.tracing {
		return ctx, func(*maker.Report, error) { ended() }
	}
	models := make([]string, len(info.Models))
	for i, id := range info.Models {
		p, m := providerModel(id)
		models[i] = p + ":" + m
	}
	ctx, span := w.tracer.Start(ctx, SpanRun, trace.WithAttributes(
		attribute.StringSlice(AttrModels, models), attribute.Int(AttrRunK, info.K)))
	return ctx, func(rep *maker.Report, err error) {
		ended()
		if rep != nil {
			span.SetAttributes(attribute.Int(AttrRunSteps, rep.Steps), attribute.Int(AttrRunSamples, rep.Launched),
				attribute.Float64(AttrRunCost, rep.Cost), attribute.Bool(AttrRunDone, rep.Done),
				semconv.GenAIUsageInputTokens(rep.Usage.InputTokens), semconv.GenAIUsageOutputTokens(rep.Usage.OutputTokens))
		}
		w.endSpan(span, err)
	}
}

// StartStep starts a step's span; its end records the step's metrics.
func (w *Watcher) StartStep(ctx context.Context, step int) (context.Context, func(*journal.StepRecord, *maker.Report, error)) {
	var span trace.Span
	if w.tracing {
		ctx, span = w.tracer.Start(ctx, SpanStep, trace.WithAttributes(attribute.Int(AttrStep, step)))
	}
	rs := runOf(ctx)
	return ctx, func(rec *journal.StepRecord, rep *maker.Report, err error) {
		if w.m != nil {
			w.m.step(ctx, rs, rec, rep, err)
		}
		if span == nil {
			return
		}
		if rec != nil {
			span.SetAttributes(stepAttrs(rec)...)
		}
		w.endSpan(span, err)
	}
}

// stepAttrs are a decided (or failed) step's attributes.
func stepAttrs(rec *journal.StepRecord) []attribute.KeyValue {
	winner, runnerUp := winnerVotes(rec)
	a := make([]attribute.KeyValue, 0, 14+len(rec.Flags))
	a = append(a,
		attribute.Int(AttrK, rec.K),
		attribute.Int(AttrSamples, rec.Launched),
		attribute.Int(AttrValid, rec.Valid),
		attribute.Int(AttrFlagged, rec.Flagged),
		attribute.Int(AttrErrors, rec.Errors),
		attribute.Int(AttrCancelled, rec.Cancelled),
		attribute.String(AttrWinnerKey, rec.Key),
		attribute.Int(AttrWinnerVotes, winner),
		attribute.Int(AttrRunnerUpVotes, runnerUp),
		attribute.Bool(AttrSplit, runnerUp > 0),
		attribute.Bool(AttrContested, rec.Contested),
		attribute.Bool(AttrEscalated, rec.Escalated),
	)
	for _, reason := range sortedKeys(rec.Flags) {
		a = append(a, attribute.Int(AttrRedFlagPrefix+snake(reason), rec.Flags[reason]))
	}
	if ti := rec.Winner.Intent; ti != nil {
		a = append(a, attribute.String(AttrToolCalled, ti.Tool))
	}
	return a
}

// winnerVotes returns the winner's valid votes and the runner-up's.
func winnerVotes(rec *journal.StepRecord) (winner, runnerUp int) {
	for k, v := range rec.Votes {
		if k == rec.Key {
			winner = v
		} else if v > runnerUp {
			runnerUp = v
		}
	}
	return winner, runnerUp
}

// snake writes a red flag's reason ("cut off") as a label value or
// attribute key part ("cut_off").
func snake(s string) string { return strings.ReplaceAll(s, " ", "_") }

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// StartCall starts a model call's span, a client span named "chat MODEL"
// with the GenAI attributes, and counts the call in flight; a remote call
// (CallInfo.Remote) gets a "draw MODEL" span of its wait and nothing else.
func (w *Watcher) StartCall(ctx context.Context, call maker.CallInfo) (context.Context, func(maker.CallResult)) {
	provider, model := "", ""
	if rs := runOf(ctx); rs != nil && len(rs.info.Models) > 0 {
		provider, model = providerModel(rs.info.Models[call.ID.Index%len(rs.info.Models)])
	}
	if call.Remote {
		return w.startRemoteCall(ctx, provider, model, call.ID)
	}
	return w.startCall(ctx, provider, model, callRequest{temperature: call.Temperature, maxTokens: call.MaxTokens, seed: call.ID.Index + 1, choices: max(call.Choices, 1)}, &call.ID)
}

// startRemoteCall observes a call a worker makes (CallInfo.Remote): a
// client span "draw MODEL" of the wait for its reply, with the sample's
// identity and no GenAI attribute, and the calls-in-flight gauge; no GenAI
// client metric: the worker's "chat" span and histograms carry the call,
// so its tokens are counted once.
func (w *Watcher) startRemoteCall(ctx context.Context, provider, model string, id maker.SampleID) (context.Context, func(maker.CallResult)) {
	var mattrs *callAttrs
	if w.m != nil {
		mattrs = w.m.callAttrs(provider, model)
		w.m.inFlight.Add(ctx, 1, mattrs.opt)
	}
	var span trace.Span
	if w.tracing {
		ctx, span = w.tracer.Start(ctx, "draw "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.Int(AttrSampleStep, id.Step), attribute.Int(AttrSampleIndex, id.Index)))
	}
	return ctx, func(res maker.CallResult) {
		if w.m != nil {
			w.m.inFlight.Add(ctx, -1, mattrs.opt)
		}
		if span != nil {
			w.endSpan(span, res.Err)
		}
	}
}

// callRequest is what a span says of a model request.
type callRequest struct {
	temperature float64
	maxTokens   int
	seed        int
	choices     int
}

func (w *Watcher) startCall(ctx context.Context, provider, model string, req callRequest, id *maker.SampleID) (context.Context, func(maker.CallResult)) {
	var mattrs *callAttrs
	if w.m != nil {
		mattrs = w.m.callAttrs(provider, model)
		w.m.inFlight.Add(ctx, 1, mattrs.opt)
	}
	var span trace.Span
	if w.tracing {
		attrs := []attribute.KeyValue{
			semconv.GenAIOperationNameChat,
			semconv.GenAIProviderNameKey.String(provider),
			semconv.GenAIRequestModel(model),
			semconv.GenAIRequestTemperature(req.temperature),
			semconv.GenAIRequestMaxTokens(req.maxTokens),
			semconv.GenAIRequestSeed(req.seed),
		}
		if req.choices != 1 { // the conventions: set only when it is not 1
			attrs = append(attrs, semconv.GenAIRequestChoiceCount(req.choices))
		}
		if id != nil {
			attrs = append(attrs, attribute.Int(AttrSampleStep, id.Step), attribute.Int(AttrSampleIndex, id.Index))
		}
		ctx, span = w.tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	return ctx, func(res maker.CallResult) {
		u := usageOf(res.Response)
		if w.m != nil {
			w.m.call(ctx, mattrs, res, u)
		}
		if span == nil {
			return
		}
		if res.Err != nil {
			w.endSpan(span, res.Err)
			return
		}
		if u.known {
			span.SetAttributes(semconv.GenAIUsageInputTokens(u.in), semconv.GenAIUsageOutputTokens(u.out))
		}
		if u.cached > 0 {
			span.SetAttributes(semconv.GenAIUsageCacheReadInputTokens(u.cached))
		}
		if len(u.finish) > 0 {
			span.SetAttributes(semconv.GenAIResponseFinishReasons(u.finish...))
		}
		id, model, reasoning, reasoningOK := responseMeta(res.Response)
		if id != "" {
			span.SetAttributes(semconv.GenAIResponseID(id))
		}
		if model != "" {
			span.SetAttributes(semconv.GenAIResponseModel(model))
		}
		if reasoningOK {
			span.SetAttributes(semconv.GenAIUsageReasoningOutputTokens(reasoning))
		}
		span.End()
	}
}

// StartTool starts a tool call's span ("execute_tool NAME", the GenAI
// convention) and times it.
func (w *Watcher) StartTool(ctx context.Context, tool maker.ToolInfo) (context.Context, func(intent.Observation, error)) {
	var span trace.Span
	if w.tracing {
		ctx, span = w.tracer.Start(ctx, SpanTool+" "+tool.Intent.Tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(tool.Intent.Tool),
			semconv.GenAIToolTypeKey.String("function"),
			semconv.GenAIToolCallID(toolCallID(tool.Step)),
			attribute.String(AttrToolCategory, string(tool.Category)),
			attribute.Int(AttrStep, tool.Step),
		))
	}
	return ctx, func(obs intent.Observation, err error) {
		if w.m != nil {
			w.m.tool(ctx, tool, obs, err)
		}
		if span == nil {
			return
		}
		span.SetAttributes(attribute.String(AttrToolStatus, string(obs.Status)), attribute.Bool(AttrToolAllowed, !obs.Denied()))
		if obs.Reason != "" {
			span.SetAttributes(attribute.String(AttrToolReason, string(obs.Reason)))
		}
		if err == nil && obs.Status == intent.StatusError {
			err = fmt.Errorf("tool %s: %s", obs.Tool, obs.Reason)
		}
		if err == nil && obs.Denied() {
			span.SetAttributes(semconv.ErrorTypeKey.String("denied"))
			span.SetStatus(codes.Error, fmt.Sprintf("tool %s denied: %s", obs.Tool, obs.Reason))
			span.End()
			return
		}
		w.endSpan(span, err)
	}
}

// toolCallID names the tool call of a step: a step's winner calls at most
// one tool, so it is unique in its run (the trace tells runs apart).
func toolCallID(step int) string { return fmt.Sprintf("mdap-step-%d", step) }

// serverURL matches a URL in an error's text: a provider's errors name
// the server they came from, and no span carries an address.
var serverURL = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"',;)]+`)

// endSpan ends span, with an error status and error.type for err; the
// status's text has w.sec's secrets redacted and server URLs cut, since
// it is exported.
func (w *Watcher) endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
		msg := err.Error()
		if w.sec != nil {
			msg, _ = w.sec.current().RedactString(msg)
		}
		msg = serverURL.ReplaceAllString(msg, "[server]")
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// providerModel splits a model identity ("openai:gpt-4o-mini@http://host/v1",
// "sim seed=1 p=0.99 ...", a NATS route) into the GenAI provider and model
// names. The server's address is dropped: it may carry credentials.
func providerModel(id string) (provider, model string) {
	if strings.HasPrefix(id, "sim") && (len(id) == 3 || id[3] == ' ') {
		return "mdap.sim", "sim"
	}
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	provider, model, ok := strings.Cut(id, ":")
	if !ok {
		return "mdap", id
	}
	if i := strings.IndexByte(model, '='); i >= 0 {
		model = model[:i] // the price
	}
	return provider, model
}

// errorType is a short, bounded name of an error's kind, for error.type
// and the mdap_model_errors_total label.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, maker.ErrCallTimeout):
		return "timeout"
	case errors.Is(err, maker.ErrPermanent):
		return "permanent"
	case errors.Is(err, maker.ErrNoChoice):
		return "no_choice"
	case errors.Is(err, maker.ErrTaskPanic):
		return "task_panic"
	case errors.Is(err, maker.ErrStepLimit):
		return "step_limit"
	}
	var le *llms.Error
	if errors.As(err, &le) && le.Code != "" {
		return string(le.Code) // one of langchaingo's few codes
	}
	return "_OTHER"
}
