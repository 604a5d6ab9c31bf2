package maker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/mono"
	"github.com/mdap-go/mdap/internal/wait"
	"github.com/tmc/langchaingo/llms"
)

// DefaultMaxTokens is the paper's cap on a reply's length, in tokens.
const DefaultMaxTokens = 750

// ErrNoChoice is returned when a provider answers with no choice at all.
var ErrNoChoice = errors.New("model returned no choice")

// ErrCallTimeout: a model call did not answer within Solver.Timeout. The
// sample is a failed draw, counted against the vote's error budget.
var ErrCallTimeout = errors.New("model call timed out")

// MaxRetryAfter caps how long a sample waits on a provider's rate-limit
// delay (a longer delay is still reported by RetryAfter; the sample waits
// this long, then counts as failed).
const MaxRetryAfter = 2 * time.Minute

// RetryAfter reads the rate-limit delay an error carries. This is mdap's
// one contract for it (maker/models produces it from a provider's
// headers; maker/batch's shared limits and the solver's samples honour
// it): an error in err's chain with a method RetryAfter() time.Duration,
// else an *llms.Error of code llms.ErrCodeRateLimit whose
// Details["retry_after"] holds a time.Duration, or a number of seconds
// (int, float64, or a string such as a Retry-After header's "3"). ok is
// false when err carries no delay; the delay is never negative and not
// capped here (a sample waits at most MaxRetryAfter). It does not read
// messages: maker/models' Delay also finds a delay a provider wrote in
// its text. Cost: a walk of the error chain.
func RetryAfter(err error) (d time.Duration, ok bool) {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		return max(ra.RetryAfter(), 0), true
	}
	var le *llms.Error
	if !errors.As(err, &le) || le.Code != llms.ErrCodeRateLimit {
		return 0, false
	}
	switch v := le.Details["retry_after"].(type) {
	case time.Duration:
		d = v
	case int:
		d = time.Duration(v) * time.Second
	case float64:
		d = seconds(v)
	case string:
		f, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if perr != nil {
			return 0, false
		}
		d = seconds(f)
	default:
		return 0, false
	}
	return max(d, 0), d > 0
}

// retryWait is how long a sample waits on err: RetryAfter's delay, at
// most MaxRetryAfter.
func retryWait(err error) (time.Duration, bool) {
	d, ok := RetryAfter(err)
	return min(d, MaxRetryAfter), ok
}

// seconds is f seconds as a duration, saturating instead of overflowing.
func seconds(f float64) time.Duration {
	if !(f < float64(math.MaxInt64/int64(time.Second))) {
		return math.MaxInt64
	}
	return time.Duration(f * float64(time.Second))
}

// DefaultTemperature is the paper's schedule: the first sample of a step at
// temperature 0, every other at 0.1.
func DefaultTemperature(sample int) float64 {
	if sample == 0 {
		return 0
	}
	return 0.1
}

// microagent makes one stateless model call per sample.
type microagent struct {
	model          llms.Model
	maxTokens      int
	temperature    func(int) float64
	tools          []llms.Tool       // declared natively
	toolText       string            // the tools declared in the prompt, if any
	options, fixed []llms.CallOption // fixed: fixedOptions, built by newAgent
	timeout        time.Duration
	schema         json.RawMessage       // the answer schema, with Solver.Structured
	perCall        *perCall              // several samples per request; nil: one
	budget         Spender               // the spending cap; nil: none
	price          func(index int) Price // read only with a budget
	observer       Observer              // nil: not watched
}

// sample asks the model once for one sample. The context carries the
// sample's identity.
func (a *microagent) sample(ctx context.Context, id SampleID, msgs []llms.MessageContent) (Reply, time.Duration, error) {
	rs, took, err := a.call(ctx, id, msgs, 1)
	if err != nil {
		if errors.Is(err, ErrBudget) {
			return Reply{}, took, err // not started
		}
		return Reply{requests: 1}, took, err // a failed request is a request
	}
	return rs[0], took, nil
}

// call makes one request for n samples (llms.WithN when n > 1), the
// samples of indices id.Index to id.Index+n-1, all at the temperature of
// id.Index. The context carries the first sample's identity: a model that
// honours n draws its choice j as sample id.Index+j (see WithSampleID).
// It returns the replies the provider gave, at most n and at least one
// (a provider that ignores n returns one): the request's input tokens
// (and cached ones) are on the first reply, its output tokens shared out
// among the replies by their length, and the first reply's Requests is 1.
func (a *microagent) call(ctx context.Context, id SampleID, msgs []llms.MessageContent, n int) ([]Reply, time.Duration, error) {
	opts := a.callOptions(id.Index, n)
	msgs = withToolText(msgs, a.toolText)
	start := mono.Now()
	callCtx := WithSampleID(ctx, id)
	if a.schema != nil {
		callCtx = WithAnswerSchema(callCtx, a.schema)
	}
	if a.timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(callCtx, a.timeout)
		defer cancel()
	}
	var worst float64
	var price Price
	if a.budget != nil {
		price = a.price(id.Index)
		worst = price.WorstCase(promptTokens(msgs), a.maxTokens, n)
		if err := a.budget.Reserve(worst); err != nil {
			return nil, 0, err
		}
	}
	callCtx, observed := a.observeCall(callCtx, id, n)
	resp, err := a.model.GenerateContent(callCtx, msgs, opts...)
	took := mono.Since(start)
	if observed != nil {
		observed(CallResult{Response: resp, Err: err, Took: took})
	}
	if a.budget != nil {
		cost := 0.0
		if err == nil && resp != nil && len(resp.Choices) > 0 && resp.Choices[0] != nil {
			for _, r := range replies(validChoices(resp.Choices, n), msgs) {
				cost += price.Cost(r.usage(0))
			}
		} else if err != nil {
			// A failed request may still have been billed: count its
			// worst case, so the cap holds whatever the provider did.
			cost = worst
		}
		a.budget.Settle(worst, cost)
	}
	if err != nil {
		if ctx.Err() == nil && callCtx.Err() != nil {
			err = fmt.Errorf("%w: no answer within %s: %w", ErrCallTimeout, a.timeout, err)
		}
		if d, ok := retryWait(err); ok {
			// The provider said when to come back: wait that long (at
			// most MaxRetryAfter) before this sample counts as failed,
			// so the vote's own backoff never retries a rate-limited
			// server in a tight loop.
			_ = wait.Sleep(ctx, d)
		}
		return nil, took, err
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return nil, took, ErrNoChoice
	}
	return replies(validChoices(resp.Choices, n), msgs), took, nil
}

// callOptions returns the call options of a request for n samples from
// index: the sample's temperature and seed (a provider that honours seeds
// gives each sample its own reproducible draw; langchaingo omits a seed of
// 0, hence +1), the options every call shares (fixedOptions), then n.
func (a *microagent) callOptions(index, n int) []llms.CallOption {
	opts := slices.Concat([]llms.CallOption{llms.WithTemperature(a.temperature(index)), llms.WithSeed(index + 1)}, a.fixed)
	if n > 1 {
		opts = append(opts, llms.WithN(n))
	}
	return opts
}

// fixedOptions returns the options of every call, which newAgent builds
// once: the reply cap, the solver's options (after the agent's, so they
// win), the tools and JSON mode.
func (a *microagent) fixedOptions() []llms.CallOption {
	opts := append([]llms.CallOption{llms.WithMaxTokens(a.maxTokens)}, a.options...)
	if len(a.tools) > 0 {
		opts = append(opts, llms.WithTools(a.tools))
	}
	if a.schema != nil {
		opts = append(opts, llms.WithJSONMode())
	}
	return opts
}

// validChoices returns at most n choices, those before a missing one.
func validChoices(choices []*llms.ContentChoice, n int) []*llms.ContentChoice {
	choices = choices[:min(n, len(choices))]
	if i := slices.Index(choices, nil); i >= 0 {
		return choices[:i]
	}
	return choices
}

// replies turns a response's choices into replies with the request's
// usage: input tokens once, on the first; output tokens per choice.
func replies(choices []*llms.ContentChoice, msgs []llms.MessageContent) []Reply {
	rs := make([]Reply, len(choices))
	first := choices[0].GenerationInfo
	in, okIn := intInfo(first, infoInput...)
	cacheRead, _ := intInfo(first, infoCacheRead...)
	cacheWrite, _ := intInfo(first, infoCacheWrite...)
	if !okIn {
		in = promptTokens(msgs)
	}
	if _, anthropic := first["CacheReadInputTokens"]; anthropic {
		// Anthropic's input_tokens leaves out the tokens read from and
		// written to the cache; mdap's InputTokens counts every one.
		in += cacheRead + cacheWrite
	}
	// Output tokens: a provider that reports per choice gives each its
	// own; OpenAI puts the request's total on every choice, which is
	// shared out by the choices' lengths so the sum is what was billed.
	outs := make([]int, len(choices))
	shared := len(choices) > 1
	okOut := true
	for i, c := range choices {
		o, ok := intInfo(c.GenerationInfo, infoOutput...)
		okOut = okOut && ok
		outs[i] = o
		if o != outs[0] {
			shared = false
		}
	}
	apportion(outs, choices, okOut, shared)
	for i, c := range choices {
		worker, _ := c.GenerationInfo[WorkerInfoKey].(string)
		rs[i] = Reply{Text: c.Content, ToolCalls: c.ToolCalls, StopReason: c.StopReason, OutputTokens: outs[i], Estimated: !okOut, Worker: worker}
	}
	rs[0].InputTokens, rs[0].cachedIn, rs[0].cacheWrite, rs[0].requests = in, cacheRead, cacheWrite, 1
	return rs
}

// apportion settles each choice's output tokens in outs: estimated from
// its text when the provider did not report them all (okOut false), or,
// when every choice carries the same figure (shared: OpenAI's request
// total), that total shared out by the choices' estimated lengths so
// the sum is what was billed.
func apportion(outs []int, choices []*llms.ContentChoice, okOut, shared bool) {
	if !okOut {
		for i, c := range choices {
			outs[i] = EstimateReplyTokens(c.Content, c.ToolCalls)
		}
		return
	}
	if !shared {
		return
	}
	est := make([]int, len(choices))
	sum := 0
	for i, c := range choices {
		est[i] = max(1, EstimateReplyTokens(c.Content, c.ToolCalls))
		sum += est[i]
	}
	total, last := outs[0], len(outs)-1
	outs[last] = total
	for i := range last {
		outs[i] = total * est[i] / sum
		outs[last] -= outs[i]
	}
}

// ResponseUsage returns the tokens a provider reported for resp, counted
// as the solver counts them: input tokens once for the request (with
// Anthropic's cache reads and writes added), output tokens summed over the
// choices (a request total that OpenAI repeats on every choice counted
// once), and the input tokens read from the provider's cache. ok is false
// when the provider reported no output token counts; the counts are then
// the solver's estimates. Cost: a pass over the choices.
func ResponseUsage(resp *llms.ContentResponse) (in, out, cached int, ok bool) {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return 0, 0, 0, false
	}
	rs := replies(validChoices(resp.Choices, len(resp.Choices)), nil)
	for _, r := range rs {
		out += r.OutputTokens
	}
	return rs[0].InputTokens, out, rs[0].cachedIn, !rs[0].Estimated
}

// The GenerationInfo keys replies reads, each list in order of
// preference (the first that holds a number counts). Providers disagree
// on names and types (OpenAI: int "PromptTokens" and "CompletionTokens";
// Anthropic: int "InputTokens", "OutputTokens", "CacheReadInputTokens",
// whose presence marks Anthropic; Ollama: "CompletionTokens").
var (
	infoInput      = []string{"PromptTokens", "input_tokens", "InputTokens"}
	infoCacheRead  = []string{"PromptCachedTokens", "CacheReadInputTokens", "cached_tokens"}
	infoCacheWrite = []string{"CacheCreationInputTokens"}
	infoOutput     = []string{"CompletionTokens", "output_tokens", "OutputTokens"}
)

// intInfo returns the number (an int, int32, int64 or float64, as an
// int) under the first of keys that holds one.
func intInfo(info map[string]any, keys ...string) (int, bool) {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return v, true
		case int32:
			return int(v), true
		case int64:
			return int(v), true
		case float64:
			return int(v), true
		}
	}
	return 0, false
}

// EstimateTokens is the token count mdap uses where a provider reports
// none, and the one the simulated model reports: ceil(len(s)/4), four
// bytes a token. It never downloads anything, unlike llms.CountTokens.
// Cost: O(1).
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// EstimateReplyTokens is EstimateTokens of a reply: its text and, for
// each tool call, its function's name and arguments. Cost: O(len(calls)).
func EstimateReplyTokens(text string, calls []llms.ToolCall) int {
	n := EstimateTokens(text)
	for _, c := range calls {
		if c.FunctionCall != nil {
			n += EstimateTokens(c.FunctionCall.Name) + EstimateTokens(c.FunctionCall.Arguments)
		}
	}
	return n
}
