package decompose

import (
	"context"
	"hash/fnv"
	"slices"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/inspect"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// nodeSalt is the step number a node's role draws under: a hash of the
// node's path and the role, so that the simulated model draws every
// (node, role, sample) from its own randomness, whatever the schedule.
func nodeSalt(path string, r Role) int {
	h := fnv.New64a()
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write([]byte(r))
	return int(h.Sum64() >> 2) // non-negative on 64-bit ints
}

// nodeModel is a role's model for one node: it renumbers each call's
// sample identity to the node's salt, so that identical problems at two
// nodes draw differently and a node draws the same in every schedule.
type nodeModel struct {
	llms.Model
	salt int
}

// GenerateContent calls the model with the node's sample identity.
func (m nodeModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	id, _ := maker.SampleIDFrom(ctx)
	ctx = maker.WithSampleID(ctx, maker.SampleID{Step: m.salt + id.Step, Index: id.Index})
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

// Call is GenerateContent over one prompt.
func (m nodeModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// Identity is the wrapped model's (maker.ModelIdentity), for the journal's
// settings.
func (m nodeModel) Identity() string { return maker.ModelIdentity(m.Model) }

// oneStep is a decision as a maker.Task: the solver samples the prompt,
// red-flags and decodes the replies, and races them; Apply keeps the
// winner. With tools, a winning tool call is run by the solver's executor
// and its observation added to the prompt, and the task goes on to the
// next step until a winner is an answer.
type oneStep struct {
	fingerprint string
	msgs        []llms.MessageContent
	decode      decoder
	tools       bool
	winner      intent.Output
}

func (t *oneStep) Fingerprint() string                              { return t.fingerprint }
func (t *oneStep) Prompt(*intent.Observation) []llms.MessageContent { return t.msgs }

// Decode is the role's decoder, or with tools a tool call.
func (t *oneStep) Decode(r maker.Reply) (intent.Output, error) {
	if t.tools {
		if out, err := maker.DecodeReply(r); err == nil && out.Intent != nil {
			return intent.Output{Intent: out.Intent}, nil
		}
	}
	return t.decode(r)
}

// Apply keeps an answer, or adds a tool call and its observation to the
// prompt.
func (t *oneStep) Apply(w intent.Output, obs *intent.Observation) (bool, error) {
	if w.Intent == nil {
		t.winner = w
		return true, nil
	}
	call, err := intent.Canonical(intent.Output{Intent: w.Intent})
	if err != nil {
		return false, err
	}
	text := "(no observation)"
	if obs != nil {
		text = obs.Text()
	}
	t.msgs = append(slices.Clip(t.msgs),
		llms.TextParts(llms.ChatMessageTypeAI, string(call)),
		llms.TextParts(llms.ChatMessageTypeHuman, "OBSERVATION: "+text))
	return false, nil
}

// drawn is one sample of a role, judged.
type drawn struct {
	out   intent.Output
	flag  error
	err   error
	usage vote.Usage
}

// drawOne calls model once as sample i of step salt, and judges the reply
// with the solver's red flags (inspect.Reply) and decode.
func drawOne(ctx context.Context, cfg maker.Config, model llms.Model, salt, i int, msgs []llms.MessageContent, decode decoder) drawn {
	temp := maker.DefaultTemperature
	if cfg.Temperature != nil {
		temp = cfg.Temperature
	}
	maxTokens := cfg.MaxTokens
	if maxTokens <= 0 {
		maxTokens = maker.DefaultMaxTokens
	}
	opts := append([]llms.CallOption{llms.WithTemperature(temp(i)), llms.WithMaxTokens(maxTokens), llms.WithSeed(i + 1)}, cfg.CallOptions...)
	cctx := maker.WithSampleID(ctx, maker.SampleID{Step: salt, Index: i})
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(cctx, cfg.Timeout)
		defer cancel()
	}
	start := time.Now()
	resp, err := model.GenerateContent(cctx, msgs, opts...)
	took := time.Since(start)
	if err != nil {
		return drawn{err: err, usage: vote.Usage{Latency: took, Requests: 1}}
	}
	if len(resp.Choices) == 0 {
		return drawn{flag: maker.ErrEmpty, usage: vote.Usage{Latency: took, Requests: 1}}
	}
	c := resp.Choices[0]
	r := maker.Reply{Text: c.Content, ToolCalls: c.ToolCalls, StopReason: c.StopReason}
	r.InputTokens, _ = c.GenerationInfo["PromptTokens"].(int)
	r.OutputTokens, _ = c.GenerationInfo["CompletionTokens"].(int)
	if r.OutputTokens == 0 {
		r.OutputTokens, r.Estimated = (len(c.Content)+3)/4, true
	}
	u := vote.Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Latency: took, Requests: 1}
	v := inspect.Reply(r, maxTokens, cfg.Flags, decode)
	if v.Flag != "" {
		return drawn{flag: flagError(v.Flag), usage: u}
	}
	return drawn{out: *v.Output, usage: u}
}

// flagError is a red flag by its name, as vote.Tally.Flags counts it.
type flagError string

func (f flagError) Error() string { return string(f) }
