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
	}
	if in, out, cached, ok := maker.ResponseUsage(resp); ok {
		u.known = true
		u.in, u.out, u.cached = in, out, cached
	}
	return u
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

// responseMeta returns the response id and the answering model of resp,
// as its first choice's GenerationInfo reports them (maker.InfoResponseID,
// maker.InfoResponseModel), and its reasoning tokens as langchaingo's OpenAI
// client reports them ("ReasoningTokens"), reasoningOK false when no
// choice says. Each is empty or zero when the model did not say. Cost: a
// few map lookups.
func responseMeta(resp *llms.ContentResponse) (id, model string, reasoning int, reasoningOK bool) {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return "", "", 0, false
	}
	info := resp.Choices[0].GenerationInfo
	id, _ = info[maker.InfoResponseID].(string)
	model, _ = info[maker.InfoResponseModel].(string)
	reasoning, reasoningOK = info["ReasoningTokens"].(int)
	return id, model, reasoning, reasoningOK
}
