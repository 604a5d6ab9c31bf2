package observe

import (
	"context"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// usage is what a response says of its tokens and ending.
type usage struct {
	in, out, cached int
	known           bool // the provider reported its token counts
	finish          []string
}

// usageOf reads a response's token counts (the keys langchaingo's
// providers use) and finish reasons.
func usageOf(resp *llms.ContentResponse) usage {
	var u usage
	if resp == nil {
		return u
	}
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if c.StopReason != "" {
			u.finish = append(u.finish, c.StopReason)
		}
		in, okIn := intInfo(c.GenerationInfo, "PromptTokens", "input_tokens", "InputTokens")
		out, okOut := intInfo(c.GenerationInfo, "CompletionTokens", "output_tokens", "OutputTokens")
		cached, _ := intInfo(c.GenerationInfo, "PromptCachedTokens", "CacheReadInputTokens", "cached_tokens", "cache_read_input_tokens")
		if okIn || okOut {
			u.known = true
			u.in, u.out, u.cached = max(u.in, in), u.out+out, max(u.cached, cached)
		}
	}
	return u
}

// intInfo reads the first of keys that info holds as a number.
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

// Model wraps m so that each call is a GenAI client span (and is counted
// in the call metrics), a child of the span in the call's context: a
// worker wraps its model so that its calls join the coordinator's trace.
// identity names the model (see maker.ModelIdentity). Without a Watcher
// (w nil) it returns m itself.
func Model(w *Watcher, m llms.Model, identity string) llms.Model {
	if w == nil {
		return m
	}
	provider, model := providerModel(identity)
	return &watchedModel{Model: m, w: w, provider: provider, model: model, identity: identity}
}

type watchedModel struct {
	llms.Model
	w                         *Watcher
	provider, model, identity string
}

// Identity is the wrapped model's.
func (m *watchedModel) Identity() string { return m.identity }

func (m *watchedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	req := callRequest{temperature: o.Temperature, maxTokens: o.MaxTokens, seed: o.Seed, choices: max(o.N, 1)}
	var id *maker.SampleID
	if sid, ok := maker.SampleIDFrom(ctx); ok {
		id = &sid
	}
	ctx, end := m.w.startCall(ctx, m.provider, m.model, req, id)
	start := time.Now()
	resp, err := m.Model.GenerateContent(ctx, msgs, opts...)
	end(maker.CallResult{Response: resp, Err: err, Took: time.Since(start)})
	return resp, err
}
