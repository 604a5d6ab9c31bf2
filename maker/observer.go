package maker

import (
	"context"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/tmc/langchaingo/llms"
)

// Observer watches a Solver's run as it happens: the run, each step, each
// model call and each tool call. maker/observe implements it with
// OpenTelemetry traces and metrics.
//
// Each Start method returns the context the work runs under (so a span
// started there is the parent of what the work does: a step's span of its
// model calls, a model call's of a remote worker's) and a function the
// solver calls exactly once when that work ends. StartCall and its end
// are called from the goroutines drawing samples, concurrently; every
// method must be safe for concurrent use and quick.
//
// Cost: a Solver without an Observer pays one nil check per run, step,
// model call and tool call, and nothing else.
type Observer interface {
	// StartRun is called when Solve starts; end gets the run's report and
	// error when Solve returns.
	StartRun(ctx context.Context, run RunInfo) (context.Context, func(rep *Report, err error))
	// StartStep is called before a step is decided; end gets its record
	// (nil if the step failed before any sample was drawn), the run's
	// report so far and the step's error.
	StartStep(ctx context.Context, step int) (context.Context, func(rec *journal.StepRecord, rep *Report, err error))
	// StartCall is called before each model call of a sample.
	StartCall(ctx context.Context, call CallInfo) (context.Context, func(CallResult))
	// StartTool is called before a winning tool intent is executed; end
	// gets the observation and the executor's error.
	StartTool(ctx context.Context, tool ToolInfo) (context.Context, func(obs intent.Observation, err error))
}

// RunInfo describes a run to an Observer.
type RunInfo struct {
	// Models are the identities of the models that draw samples (one, or
	// an ensemble's members in order); sample i goes to Models[i%len].
	Models []string
	// K is the configured margin (Vote.K; under AdaptiveK each step's
	// is its record's K).
	K int
	// Adaptive is set when each step's k is chosen by a KPolicy
	// (Config.AdaptiveK).
	Adaptive KPolicy
	// Price is the Solver's price, for models that know none of their own.
	Price Price
	// Prices are each model's price, in Models' order.
	Prices []Price
}

// CallInfo describes one model call to an Observer.
type CallInfo struct {
	// ID is the sample's step and index.
	ID SampleID
	// Temperature and MaxTokens are the call's.
	Temperature float64
	MaxTokens   int
	// Choices is the number of samples the request asks for (llms.WithN).
	Choices int
	// Remote: another process makes the provider call (the model is a
	// RemoteModel, such as maker/cluster's, whose workers call the
	// provider and report the call themselves). An observer then sees
	// the wait for the reply, and records the provider call's figures
	// (tokens, GenAI spans and metrics) only where the call is made, so
	// that they are counted once.
	Remote bool
}

// RemoteModel is implemented by a model whose calls another process
// makes: maker/cluster's Model, whose jobs workers draw. Its calls are
// observed with CallInfo.Remote set.
type RemoteModel interface {
	// DrawsRemotely reports whether the calls are made elsewhere.
	DrawsRemotely() bool
}

// CallResult is what a model call returned.
type CallResult struct {
	// Response is the provider's response; nil when Err is set.
	Response *llms.ContentResponse
	// Err is the call's error.
	Err error
	// Took is the call's duration.
	Took time.Duration
}

// ToolInfo describes a winning tool intent about to be executed.
type ToolInfo struct {
	// Step is the step whose winner calls the tool.
	Step int
	// Intent is the call.
	Intent intent.ToolIntent
	// Category is the tool's category, empty when the executor does not
	// know the tool.
	Category categories.Category
}

func noStepEnd(*journal.StepRecord, *Report, error) {}
func noToolEnd(intent.Observation, error)           {}
func noRunEnd(*Report, error)                       {}
func runInfo(s *Solver, ids []string, k int) RunInfo {
	info := RunInfo{Models: ids, K: k, Adaptive: s.AdaptiveK, Price: s.Price, Prices: make([]Price, len(ids))}
	ms := members(s.Model)
	for i := range ms {
		info.Prices[i] = s.priceOf(ms, i)
	}
	return info
}

// observeRun starts the run's observation; without an Observer it
// returns ctx and a no-op.
func (s *Solver) observeRun(ctx context.Context, ids []string, k int) (context.Context, func(*Report, error)) {
	if s.Observer == nil {
		return ctx, noRunEnd
	}
	return s.Observer.StartRun(ctx, runInfo(s, ids, k))
}

// observeStep starts step r.next's observation.
func (r *run) observeStep(ctx context.Context) (context.Context, func(*journal.StepRecord, *Report, error)) {
	if r.Observer == nil {
		return ctx, noStepEnd
	}
	return r.Observer.StartStep(ctx, r.next)
}

// observeTool starts a tool call's observation.
func (r *run) observeTool(ctx context.Context, step int, ti *intent.ToolIntent) (context.Context, func(intent.Observation, error)) {
	if r.Observer == nil {
		return ctx, noToolEnd
	}
	info := ToolInfo{Step: step, Intent: *ti}
	if r.Executor != nil {
		if e, ok := r.Executor.Lookup(ti.Tool); ok {
			info.Category = e.Category
		}
	}
	return r.Observer.StartTool(ctx, info)
}

// observeCall starts a model call's observation; end is nil without an
// Observer.
func (a *microagent) observeCall(ctx context.Context, id SampleID, n int) (context.Context, func(CallResult)) {
	if a.observer == nil {
		return ctx, nil
	}
	rm, ok := a.model.(RemoteModel)
	return a.observer.StartCall(ctx, CallInfo{ID: id, Temperature: a.temperature(id.Index), MaxTokens: a.maxTokens, Choices: n, Remote: ok && rm.DrawsRemotely()})
}
