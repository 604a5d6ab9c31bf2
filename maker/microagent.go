package maker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

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
	if d <= 0 {
		return 0, false
	}
	return d, true
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
	model       llms.Model
	maxTokens   int
	temperature func(int) float64
	tools       []llms.Tool
	options     []llms.CallOption
	timeout     time.Duration
	schema      json.RawMessage // the answer schema, with Solver.Structured
}

// sample asks the model once. The context carries the sample's identity.
func (a *microagent) sample(ctx context.Context, id SampleID, msgs []llms.MessageContent) (Reply, time.Duration, error) {
	opts := append([]llms.CallOption{
		llms.WithTemperature(a.temperature(id.Index)),
		llms.WithMaxTokens(a.maxTokens),
		// A provider that honours seeds gives each sample its own
		// reproducible draw (langchaingo omits a seed of 0, hence +1).
		llms.WithSeed(id.Index + 1),
	}, a.options...)
	if len(a.tools) > 0 {
		opts = append(opts, llms.WithTools(a.tools))
	}
	start := time.Now()
	callCtx := WithSampleID(ctx, id)
	if a.schema != nil {
		callCtx = WithAnswerSchema(callCtx, a.schema)
		opts = append(opts, llms.WithJSONMode())
	}
	if a.timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(callCtx, a.timeout)
		defer cancel()
	}
	resp, err := a.model.GenerateContent(callCtx, msgs, opts...)
	took := time.Since(start)
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
		return Reply{}, took, err
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return Reply{}, took, ErrNoChoice
	}
	c := resp.Choices[0]
	r := Reply{Text: c.Content, ToolCalls: c.ToolCalls, StopReason: c.StopReason}
	in, okIn := intInfo(c.GenerationInfo, "PromptTokens", "input_tokens", "InputTokens")
	out, okOut := intInfo(c.GenerationInfo, "CompletionTokens", "output_tokens", "OutputTokens")
	if !okOut {
		out = EstimateReplyTokens(c.Content, c.ToolCalls)
	}
	if !okIn {
		in = 0
		for _, m := range msgs {
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					in += EstimateTokens(t.Text)
				}
			}
		}
	}
	r.InputTokens, r.OutputTokens, r.Estimated = in, out, !okOut
	return r, took, nil
}

// intInfo reads the first of keys that GenerationInfo holds as a number.
// Providers disagree on names and types (OpenAI: int "CompletionTokens";
// Anthropic: int "OutputTokens"; Ollama: "CompletionTokens").
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
