package observe

import (
	"context"
	"sync"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/journal"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// The instruments, by their OpenTelemetry names; the Prometheus names
// (what /metrics serves) follow the exporter's translation: dots become
// underscores, counters end in _total, seconds in _seconds. Every label
// has a bounded set of values: no step index, no vote key, no tool name a
// model made up.
const (
	// MetricSamples counts samples by outcome (valid, flagged, error,
	// cancelled): mdap_samples_total, equal to the run summary's valid,
	// flagged, errors and cancelled (their sum is its samples).
	MetricSamples = "mdap.samples"
	// MetricRedFlags counts red-flagged samples by reason:
	// mdap_red_flags_total{reason}.
	MetricRedFlags = "mdap.red_flags"
	// MetricModelErrors counts failed model calls by error.type.
	MetricModelErrors = "mdap.model.errors"
	// MetricSteps counts steps by result (decided, failed).
	MetricSteps = "mdap.steps"
	// MetricSplit counts decided steps where a second answer got a valid
	// vote.
	MetricSplit = "mdap.steps.split"
	// MetricContested counts steps whose first race ran past the
	// escalation threshold (maker.Escalation; the report's Contested).
	MetricContested = "mdap.steps.contested"
	// MetricEscalated counts contested steps decided by the escalation
	// policy (the report's Escalated).
	MetricEscalated = "mdap.steps.escalated"
	// MetricWrong counts decided steps whose winner was wrong, for tasks
	// with an oracle (see Oracle).
	MetricWrong = "mdap.steps.wrong"
	// MetricTokens counts tokens by type (input, output: the run
	// summary's; cached: the input tokens a provider read from its cache).
	MetricTokens = "mdap.tokens"
	// MetricCost counts dollars spent: mdap_cost_dollars_total.
	MetricCost = "mdap.cost.dollars"
	// MetricCostCap is the run's spending cap in dollars, when it has one.
	MetricCostCap = "mdap.cost.cap.dollars"
	// MetricCallDuration is the GenAI client operation duration of each
	// model call: gen_ai_client_operation_duration_seconds.
	MetricCallDuration = "gen_ai.client.operation.duration"
	// MetricTokenUsage is the GenAI client token usage of each model
	// call, by gen_ai.token.type (input, output):
	// gen_ai_client_token_usage.
	MetricTokenUsage = "gen_ai.client.token.usage"
	// MetricRunsActive is the number of runs in progress in the process:
	// mdap_runs_active. A process that lingers after its run (to be
	// scraped once more) serves 0, so an alert on a stalled run can tell
	// it from one that ended.
	MetricRunsActive = "mdap.runs.active"
	// MetricStepSamples is the histogram of samples per decided step.
	MetricStepSamples = "mdap.step.samples"
	// MetricInFlight is the number of model calls in flight.
	MetricInFlight = "mdap.model.calls.in_flight"
	// MetricK is the current step's margin k; MetricP the run's estimate
	// of p (the share of valid votes that agreed with their winner) and
	// MetricPLower its lower bound, under --k auto.
	MetricK      = "mdap.k"
	MetricP      = "mdap.p.estimate"
	MetricPLower = "mdap.p.lower"
	// MetricToolCalls counts executed tool intents by category, status
	// and reason; MetricToolDuration times them.
	MetricToolCalls    = "mdap.tool.calls"
	MetricToolDuration = "mdap.tool.duration"
	// MetricBatchTasks is a batch's tasks by state (queued, running,
	// done, failed).
	MetricBatchTasks = "mdap.batch.tasks"
	// MetricWorkerJobs counts the jobs a worker served, by outcome
	// (served, failed: the model's error was sent back).
	MetricWorkerJobs = "mdap.worker.jobs"
	// MetricQueueDepth is the number of sample jobs waiting in the queue.
	MetricQueueDepth = "mdap.queue.depth"
)

// The bucket boundaries the GenAI semantic conventions give their client
// histograms.
var (
	operationDurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenUsageBuckets        = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// instruments are the meter's instruments.
type instruments struct {
	samples, redFlags, modelErrors, steps, split, contested, escalated, wrong, tokens, toolCalls metric.Int64Counter
	cost                                                                                         metric.Float64Counter
	callDuration, toolDuration                                                                   metric.Float64Histogram
	stepSamples, tokenUsage                                                                      metric.Int64Histogram
	inFlight, runsActive                                                                         metric.Int64UpDownCounter
	k, batch                                                                                     metric.Int64Gauge
	p, pLower, costCap                                                                           metric.Float64Gauge
	meter                                                                                        metric.Meter

	valid, flagged, errored, cancelled, decided, failed, in, out, cached metric.MeasurementOption
	attrs                                                                sync.Map // provider+"\x00"+model -> metric.MeasurementOption
}

func newInstruments(m metric.Meter) (*instruments, error) {
	in := &instruments{meter: m}
	var errs []error
	c := func(name, unit, desc string) metric.Int64Counter {
		x, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return x
	}
	in.samples = c(MetricSamples, "{sample}", "Samples drawn, by outcome: valid, flagged (red-flagged), error (the provider failed), cancelled (the race was decided first).")
	in.redFlags = c(MetricRedFlags, "{sample}", "Red-flagged samples by reason.")
	in.modelErrors = c(MetricModelErrors, "{call}", "Failed model calls by error.type.")
	in.steps = c(MetricSteps, "{step}", "Steps by result: decided or failed.")
	in.split = c(MetricSplit, "{step}", "Decided steps where another answer also got a valid vote.")
	in.contested = c(MetricContested, "{step}", "Steps whose first race ran past the escalation threshold.")
	in.escalated = c(MetricEscalated, "{step}", "Contested steps decided by the escalation policy.")
	in.wrong = c(MetricWrong, "{step}", "Decided steps whose winner was wrong (tasks with an oracle only).")
	in.tokens = c(MetricTokens, "{token}", "Tokens by type: input, output, cached (input read from the provider's cache).")
	in.toolCalls = c(MetricToolCalls, "{call}", "Executed tool intents by category, status (ok, denied, error) and reason.")
	var err error
	in.cost, err = m.Float64Counter(MetricCost, metric.WithUnit("{dollar}"), metric.WithDescription("Dollars spent, at each model's price."))
	errs = append(errs, err)
	in.callDuration, err = m.Float64Histogram(MetricCallDuration, metric.WithUnit("s"), metric.WithDescription("GenAI operation duration: one model call."),
		metric.WithExplicitBucketBoundaries(operationDurationBuckets...))
	errs = append(errs, err)
	in.tokenUsage, err = m.Int64Histogram(MetricTokenUsage, metric.WithUnit("{token}"), metric.WithDescription("GenAI token usage of one model call, by gen_ai.token.type: input, output."),
		metric.WithExplicitBucketBoundaries(tokenUsageBuckets...))
	errs = append(errs, err)
	in.toolDuration, err = m.Float64Histogram(MetricToolDuration, metric.WithUnit("s"), metric.WithDescription("Duration of an executed tool intent."),
		metric.WithExplicitBucketBoundaries(0.0001, 0.001, 0.01, 0.1, 1, 10, 60))
	errs = append(errs, err)
	in.stepSamples, err = m.Int64Histogram(MetricStepSamples, metric.WithUnit("{sample}"), metric.WithDescription("Samples a decided step took (valid, flagged and failed)."),
		metric.WithExplicitBucketBoundaries(1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100))
	errs = append(errs, err)
	in.inFlight, err = m.Int64UpDownCounter(MetricInFlight, metric.WithUnit("{call}"), metric.WithDescription("Model calls in flight."))
	errs = append(errs, err)
	in.runsActive, err = m.Int64UpDownCounter(MetricRunsActive, metric.WithUnit("{run}"), metric.WithDescription("Runs in progress in this process."))
	errs = append(errs, err)
	in.k, err = m.Int64Gauge(MetricK, metric.WithUnit("{vote}"), metric.WithDescription("The margin k of the last step."))
	errs = append(errs, err)
	in.batch, err = m.Int64Gauge(MetricBatchTasks, metric.WithUnit("{task}"), metric.WithDescription("A batch's tasks by state: queued, running, done, failed."))
	errs = append(errs, err)
	in.p, err = m.Float64Gauge(MetricP, metric.WithUnit("1"), metric.WithDescription("The run's estimate of p: the share of valid votes that agreed with their step's winner."))
	errs = append(errs, err)
	in.pLower, err = m.Float64Gauge(MetricPLower, metric.WithUnit("1"), metric.WithDescription("The lower confidence bound of p that --k auto plans with."))
	errs = append(errs, err)
	in.costCap, err = m.Float64Gauge(MetricCostCap, metric.WithUnit("{dollar}"), metric.WithDescription("The run's spending cap in dollars."))
	errs = append(errs, err)
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	o := func(k, v string) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(attribute.String(k, v)))
	}
	in.valid, in.flagged, in.errored, in.cancelled = o("outcome", "valid"), o("outcome", "flagged"), o("outcome", "error"), o("outcome", "cancelled")
	in.decided, in.failed = o("result", "decided"), o("result", "failed")
	in.in, in.out, in.cached = o("type", "input"), o("type", "output"), o("type", "cached")
	return in, nil
}

// callAttrs are a model's call attributes, made once per model.
type callAttrs struct {
	opt           metric.MeasurementOption
	input, output metric.MeasurementOption // opt's attributes and gen_ai.token.type
	kvs           []attribute.KeyValue
}

func (in *instruments) callAttrs(provider, model string) *callAttrs {
	key := provider + "\x00" + model
	if v, ok := in.attrs.Load(key); ok {
		return v.(*callAttrs)
	}
	kvs := []attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(provider), semconv.GenAIRequestModel(model)}
	with := func(kv attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append(kvs[:len(kvs):len(kvs)], kv)...))
	}
	v, _ := in.attrs.LoadOrStore(key, &callAttrs{opt: metric.WithAttributeSet(attribute.NewSet(kvs...)), kvs: kvs,
		input: with(semconv.GenAITokenTypeInput), output: with(semconv.GenAITokenTypeOutput)})
	return v.(*callAttrs)
}

// call records a finished model call.
func (in *instruments) call(ctx context.Context, ca *callAttrs, res maker.CallResult, u usage) {
	in.inFlight.Add(ctx, -1, ca.opt)
	if res.Err != nil {
		et := errorType(res.Err)
		in.modelErrors.Add(ctx, 1, metric.WithAttributes(semconv.ErrorTypeKey.String(et)))
		s := attribute.NewSet(append(ca.kvs[:len(ca.kvs):len(ca.kvs)], semconv.ErrorTypeKey.String(et))...)
		in.callDuration.Record(ctx, res.Took.Seconds(), metric.WithAttributeSet(s))
		return
	}
	in.callDuration.Record(ctx, res.Took.Seconds(), ca.opt)
	if u.known {
		in.tokenUsage.Record(ctx, int64(u.in), ca.input)
		in.tokenUsage.Record(ctx, int64(u.out), ca.output)
	}
	if u.cached > 0 {
		in.tokens.Add(ctx, int64(u.cached), in.cached)
	}
}

// runStarted counts a run in progress, and exports the series a stalled
// run must show, mdap_steps_total by result and mdap_samples_total by
// outcome, at zero if they do not exist yet: a run whose every call hangs
// decides no first step, and a series that does not exist cannot show it
// (Prometheus: export a zero for series known to exist). The returned
// func, called once, ends the run's count.
func (in *instruments) runStarted(ctx context.Context) (ended func()) {
	in.runsActive.Add(ctx, 1)
	for _, o := range []metric.MeasurementOption{in.decided, in.failed} {
		in.steps.Add(ctx, 0, o)
	}
	for _, o := range []metric.MeasurementOption{in.valid, in.flagged, in.errored, in.cancelled} {
		in.samples.Add(ctx, 0, o)
	}
	var once sync.Once
	return func() { once.Do(func() { in.runsActive.Add(ctx, -1) }) }
}

// step records a step's samples, tokens, cost and outcome.
func (in *instruments) step(ctx context.Context, rs *runState, rec *journal.StepRecord, rep *maker.Report, err error) {
	if rec != nil {
		in.samples.Add(ctx, int64(rec.Valid), in.valid)
		in.samples.Add(ctx, int64(rec.Flagged), in.flagged)
		in.samples.Add(ctx, int64(rec.Errors), in.errored)
		in.samples.Add(ctx, int64(rec.Cancelled), in.cancelled)
		for reason, n := range rec.Flags {
			in.redFlags.Add(ctx, int64(n), metric.WithAttributes(attribute.String("reason", snake(reason))))
		}
		in.tokens.Add(ctx, int64(rec.Usage.InputTokens), in.in)
		in.tokens.Add(ctx, int64(rec.Usage.OutputTokens), in.out)
		if rs != nil {
			in.cost.Add(ctx, stepCost(rs.info, rec))
		}
		in.k.Record(ctx, int64(rec.K))
	}
	if err != nil || rec == nil {
		in.steps.Add(ctx, 1, in.failed)
		return
	}
	in.steps.Add(ctx, 1, in.decided)
	in.stepSamples.Record(ctx, int64(rec.Valid+rec.Flagged+rec.Errors))
	if _, runnerUp := winnerVotes(rec); runnerUp > 0 {
		in.split.Add(ctx, 1)
	}
	if rec.Contested {
		in.contested.Add(ctx, 1)
	}
	if rec.Escalated {
		in.escalated.Add(ctx, 1)
	}
	if rs != nil && rs.wrong != nil {
		if n := rs.wrong(); n > rs.seen {
			in.wrong.Add(ctx, int64(n-rs.seen))
			rs.seen = n
		}
	}
	if rep != nil {
		if w, v := agreement(rep); v > 0 {
			in.p.Record(ctx, float64(w)/float64(v))
			if rs != nil {
				if a, ok := adaptive.Of(rs.info.Adaptive); ok {
					in.pLower.Record(ctx, a.Estimate(*rep).Lower)
				}
			}
		}
	}
}

// stepCost prices a step's usage: each ensemble member's share at its
// price, as the run's Report does.
func stepCost(info maker.RunInfo, rec *journal.StepRecord) float64 {
	price := func(i int) maker.Price {
		if i < len(info.Prices) {
			return info.Prices[i]
		}
		return info.Price
	}
	if len(rec.Models) == 0 {
		return price(0).Cost(rec.Usage)
	}
	var c float64
	for i, m := range rec.Models {
		c += price(i).Cost(m.Usage)
	}
	return c
}

// tool records an executed tool intent.
func (in *instruments) tool(ctx context.Context, t maker.ToolInfo, obs intent.Observation, _ error) {
	attrs := metric.WithAttributes(attribute.String("category", string(t.Category)), attribute.String("status", string(obs.Status)), attribute.String("reason", string(obs.Reason)))
	in.toolCalls.Add(ctx, 1, attrs)
	in.toolDuration.Record(ctx, obs.Duration.Seconds(), metric.WithAttributes(attribute.String("category", string(t.Category))))
}

// RecordBatch sets a batch's task gauges. No-op with metrics off.
func (w *Watcher) RecordBatch(ctx context.Context, queued, running, done, failed int) {
	if w == nil || w.m == nil {
		return
	}
	for _, s := range []struct {
		state string
		n     int
	}{{"queued", queued}, {"running", running}, {"done", done}, {"failed", failed}} {
		w.m.batch.Record(ctx, int64(s.n), metric.WithAttributes(attribute.String("state", s.state)))
	}
}

// BatchRecorder is RecordBatch for a caller without a context (a batch's
// progress, batch.NewGauge): nil with metrics off (or on a nil Watcher),
// so that such a caller records nothing.
func (w *Watcher) BatchRecorder() func(queued, running, done, failed int) {
	if w == nil || w.m == nil {
		return nil
	}
	return func(queued, running, done, failed int) {
		w.RecordBatch(context.Background(), queued, running, done, failed)
	}
}

// RecordCostCap sets the spending cap gauge (for the "spend near the cap"
// alert). No-op with metrics off.
func (w *Watcher) RecordCostCap(ctx context.Context, dollars float64) {
	if w == nil || w.m == nil {
		return
	}
	w.m.costCap.Record(ctx, dollars)
}

// ObserveWorker reports a worker's jobs at each collection (each scrape
// of /metrics): jobs returns the jobs answered and, of those, failed (the
// model's error was sent back). No-op with metrics off.
//
// Errors: the meter's, when the callback could not be registered.
func (w *Watcher) ObserveWorker(jobs func() (served, failed int64)) error {
	if w == nil || w.m == nil {
		return nil
	}
	m := w.m.meter
	jc, err := m.Int64ObservableCounter(MetricWorkerJobs, metric.WithUnit("{job}"), metric.WithDescription("Sample jobs a worker answered, by outcome: served (a reply), failed (the model's error sent back)."))
	if err != nil {
		return err
	}
	served, failed := metric.WithAttributes(attribute.String("outcome", "served")), metric.WithAttributes(attribute.String("outcome", "failed"))
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s, f := jobs()
		o.ObserveInt64(jc, s-f, served)
		o.ObserveInt64(jc, f, failed)
		return nil
	}, jc)
	return err
}

// MetricSimRequests counts the requests maker serve-sim answered, by
// outcome (reply, fault, bad_request, provider_error).
const MetricSimRequests = "mdap.simserver.requests"

// ObserveCounter reports a monotonic count by one label at each
// collection: counts returns the value of each label value (a small,
// fixed set). No-op with metrics off.
//
// Errors: the meter's, when the callback could not be registered.
func (w *Watcher) ObserveCounter(name, unit, description, label string, counts func() map[string]int64) error {
	if w == nil || w.m == nil {
		return nil
	}
	m := w.m.meter
	c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(description))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for v, n := range counts() {
			o.ObserveInt64(c, n, metric.WithAttributes(attribute.String(label, v)))
		}
		return nil
	}, c)
	return err
}

// ObserveQueue reports the queue's depth at each collection: depth gets a
// context bounded to a second and returns false when the depth is
// unknown. No-op with metrics off.
//
// Errors: the meter's, when the callback could not be registered.
func (w *Watcher) ObserveQueue(depth func(context.Context) (int64, bool)) error {
	if w == nil || w.m == nil {
		return nil
	}
	m := w.m.meter
	qd, err := m.Int64ObservableGauge(MetricQueueDepth, metric.WithUnit("{job}"), metric.WithDescription("Sample jobs published and not yet answered or withdrawn: queued or being drawn."))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if n, ok := depth(dctx); ok {
			o.ObserveInt64(qd, n)
		}
		return nil
	}, qd)
	return err
}

// agreement returns the valid votes that went to their step's winner and
// all valid votes, summed over the models (Report.Models). A resumed run
// rebuilds both from its journal.
func agreement(rep *maker.Report) (winnerVotes, valid int) {
	for _, m := range rep.Models {
		winnerVotes += m.WinnerVotes
		valid += m.Valid
	}
	return winnerVotes, valid
}
