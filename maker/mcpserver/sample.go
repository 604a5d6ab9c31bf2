package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// maxDeclaredTools bounds the tools a sample_and_vote request declares.
const maxDeclaredTools = 128

// Message is one chat message of a prompt.
type Message struct {
	Role    string `json:"role" jsonschema:"system, user or assistant"`
	Content string `json:"content" jsonschema:"the message's text"`
}

// FunctionTool is a tool declared to the model, in OpenAI's shape.
type FunctionTool struct {
	Type     string      `json:"type,omitempty" jsonschema:"function, or empty"`
	Function FunctionDef `json:"function" jsonschema:"the function"`
}

// FunctionDef is the function of a FunctionTool.
type FunctionDef struct {
	Name        string `json:"name" jsonschema:"the tool's name"`
	Description string `json:"description,omitempty" jsonschema:"what the tool does"`
	Parameters  any    `json:"parameters,omitempty" jsonschema:"the JSON Schema of its arguments"`
}

// SampleAndVoteInput is the input of the sample_and_vote tool.
type SampleAndVoteInput struct {
	Messages []Message      `json:"messages" jsonschema:"the prompt: the messages every sample sees, the same each time (a microagent is stateless)"`
	Tools    []FunctionTool `json:"tools,omitempty" jsonschema:"tools declared to the model, in OpenAI's shape: the winner may be a call of one; the server never runs it"`
	// AnswerSchema, when given, keys and groups the samples by the
	// matchers it declares (x-mdap-match), as a run of a spec with that
	// answer contract would.
	AnswerSchema any `json:"answer_schema,omitempty" jsonschema:"optional: the answer contract (a JSON Schema); its x-mdap-match annotations (text, set, a number tolerance) make equivalent answers vote together, as in a run"`
	Sampling
}

// SampleInfo is one sample of a sample_and_vote race.
type SampleInfo struct {
	Index        int     `json:"index" jsonschema:"the sample's index, from 0"`
	Model        string  `json:"model" jsonschema:"the identity of the model that drew it"`
	Temperature  float64 `json:"temperature" jsonschema:"the temperature it was drawn at"`
	Error        string  `json:"error,omitempty" jsonschema:"the model call's error, if it failed (such a sample never votes)"`
	Flag         string  `json:"flag,omitempty" jsonschema:"its red flag, if any (such a sample never votes)"`
	Reason       string  `json:"reason,omitempty" jsonschema:"why it was red-flagged"`
	Key          string  `json:"key,omitempty" jsonschema:"the key it voted for, in hex"`
	Counted      bool    `json:"counted" jsonschema:"false for a sample the race did not tally: it ended before it, or cancelled it"`
	InputTokens  int     `json:"input_tokens" jsonschema:"prompt tokens"`
	OutputTokens int     `json:"output_tokens" jsonschema:"reply tokens"`
}

// Usage is what samples cost.
type Usage struct {
	InputTokens  int     `json:"input_tokens" jsonschema:"prompt tokens, over every sample drawn"`
	OutputTokens int     `json:"output_tokens" jsonschema:"reply tokens, over every sample drawn"`
	ModelSeconds float64 `json:"model_seconds" jsonschema:"model time summed over the samples (it exceeds the wall time when samples run in parallel)"`
}

// SampleAndVoteOutput is the output of the sample_and_vote tool.
type SampleAndVoteOutput struct {
	Decided    bool         `json:"decided" jsonschema:"true when an answer led every other by k valid votes"`
	Message    string       `json:"message" jsonschema:"the outcome in words"`
	K          int          `json:"k" jsonschema:"the margin"`
	Winner     *Winner      `json:"winner,omitempty" jsonschema:"the decision, when decided"`
	WinnerText string       `json:"winner_text,omitempty" jsonschema:"the text of the winner's first vote, as the model wrote it"`
	Leader     string       `json:"leader,omitempty" jsonschema:"when undecided: the key with the most votes"`
	Lead       int          `json:"lead" jsonschema:"the leader's margin over the runner-up"`
	Need       int          `json:"need" jsonschema:"when undecided: the fewest more votes that could decide, k minus the lead"`
	Tally      Tally        `json:"tally" jsonschema:"the votes and red flags counted"`
	Launched   int          `json:"launched" jsonschema:"samples drawn"`
	Errors     int          `json:"errors" jsonschema:"tallied samples whose model call failed"`
	Cancelled  int          `json:"cancelled" jsonschema:"samples drawn but not tallied"`
	Samples    []SampleInfo `json:"samples" jsonschema:"every sample drawn, by index"`
	Usage      Usage        `json:"usage" jsonschema:"what the samples cost"`
	Model      string       `json:"model" jsonschema:"the identity of the model (or ensemble) sampled"`
}

// drawn is what a valid sample votes with.
type drawn struct {
	out       *intent.Output
	canonical string
	text      string
}

func (s *Server) sampleTool(ctx context.Context, req *mcp.CallToolRequest, in SampleAndVoteInput) (*mcp.CallToolResult, SampleAndVoteOutput, error) {
	var out SampleAndVoteOutput
	msgs, err := s.messages(in.Messages)
	if err != nil {
		return nil, out, err
	}
	tools, err := declared(in.Tools)
	if err != nil {
		return nil, out, err
	}
	st, err := s.check(in.Sampling)
	if err != nil {
		return nil, out, err
	}
	matcher, err := answerMatcher(in.AnswerSchema, s.matchers())
	if err != nil {
		return nil, out, err
	}
	var oracle sim.Oracle
	if _, _, err := hanoi.ParsePrompt(sim.PromptText(msgs)); err == nil {
		oracle = hanoi.Oracle{JSON: true}
	}
	model, err := s.open(st, oracle, "answers only Towers of Hanoi step prompts (with the \"Current state:\" and \"Previous move:\" lines maker/hanoi writes); sample other prompts through a real model, or use run_task for a spec task with a script")
	if err != nil {
		return nil, out, err
	}
	ids := identities(model)
	out.Model = maker.ModelIdentity(model)
	out.K = st.vote.K

	// The solver's own draw: its call options (temperature, cap, the
	// sample's seed, tools), red flags and judging, so a sample here is
	// what a run would draw.
	drawer := s.solver(st, model, tools, nil)
	// A call's arguments are normalised as a run's executor does (healed
	// against the declared schema); nothing is ever run.
	if drawer.Executor, err = declaredExecutor(in.Tools); err != nil {
		return nil, out, err
	}
	sampler, err := drawer.NewSampler()
	if err != nil {
		return nil, out, err
	}
	var mu sync.Mutex
	var samples []SampleInfo
	var canon []string // each valid sample's canonical form, by index
	var vals []drawn   // each sample's value, by index
	prog := newProgress(ctx, req, s.log)
	// Every sample launched is reported: valid and red-flagged ones (at
	// most MaxSamples), failed ones (at most MaxErrors more) and those the
	// race cancels; the total is that bound, so progress never passes it.
	errBudget := st.vote.MaxErrors
	if errBudget == 0 {
		errBudget = vote.DefaultMaxErrors
	}
	total := float64(st.vote.MaxSamples + max(errBudget, 0) + max(st.vote.Parallel, st.vote.K))
	draw := func(ctx context.Context, i int) (sm vote.Sample[drawn]) {
		info := SampleInfo{Index: i, Model: ids[i%len(ids)], Temperature: st.temperature(i)}
		defer func() {
			info.InputTokens, info.OutputTokens = sm.Usage.InputTokens, sm.Usage.OutputTokens
			mu.Lock()
			for len(samples) <= i {
				samples = append(samples, SampleInfo{Index: len(samples)})
				canon = append(canon, "")
				vals = append(vals, drawn{})
			}
			samples[i], canon[i], vals[i] = info, sm.Value.canonical, sm.Value
			mu.Unlock()
			switch {
			case info.Error != "":
				prog.step(total, "sample %d: the model call failed: %s", i, info.Error)
			case info.Flag != "":
				prog.step(total, "sample %d: red flag %s", i, info.Flag)
			default:
				prog.step(total, "sample %d: votes for %s", i, info.Key)
			}
		}()
		ds, err := sampler.DrawWave(ctx, 0, vote.Wave{First: i, N: 1}, msgs, nil)
		if err != nil {
			ds = []maker.Drawn{{Err: err}}
		}
		d := ds[0]
		sm.Usage = d.Usage
		switch {
		case d.Err != nil:
			sm.Err, info.Error = d.Err, d.Err.Error()
			return sm
		case d.Flag != nil:
			sm.Flag, info.Flag, info.Reason = d.Flag, d.Flag.Error(), d.Reason.Error()
			return sm
		}
		canon, err := intent.Canonical(d.Output)
		if err != nil { // the Sampler keyed it, so it has a canonical form
			sm.Err, info.Error = err, err.Error()
			return sm
		}
		if matcher != nil {
			d.Key, _ = matcher.Key(d.Output) // the Sampler keyed it: it has a canonical form
		}
		sm.Key, info.Key = d.Key, hexKey(d.Key)
		sm.Value = drawn{out: &d.Output, canonical: string(canon), text: d.Reply.Text}
		return sm
	}
	// A permanent provider error (a wrong URL, model or key) ends the race
	// at once: no retry can fix it, as in the CLI.
	raceCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	inner := draw
	draw = func(ctx context.Context, i int) vote.Sample[drawn] {
		sm := inner(ctx, i)
		if errors.Is(sm.Err, maker.ErrPermanent) {
			stop(sm.Err)
		}
		return sm
	}
	choose := matcherChoose(raceCtx, matcher, func(d drawn) intent.Output { return *d.out })
	res, raceErr := vote.RaceChoosing(raceCtx, st.vote, choose, draw)
	if ctx.Err() != nil {
		return nil, out, fmt.Errorf("cancelled after %s: %w", words.Plural(res.Launched, "sample"), ctx.Err())
	}
	if cause := context.Cause(raceCtx); errors.Is(cause, maker.ErrPermanent) {
		out.Launched, out.Errors = res.Launched, res.Errors
		out.Tally = Tally{Flags: map[string]int{}, Votes: newBoard().tally()}
		out.Samples = samples
		out.Message = fmt.Sprintf("the model refused for good, so no sample was retried: %v", cause)
		return failure(out.Message), out, nil
	}

	if errors.Is(raceErr, vote.ErrMatch) {
		out.Launched, out.Errors = res.Launched, res.Errors
		out.Tally = Tally{Flags: map[string]int{}, Votes: newBoard().tally()}
		out.Samples = samples
		out.Message = fmt.Sprintf("the server's embedder or judge failed, so no class was guessed: %v", raceErr)
		return failure(out.Message), out, nil
	}

	committed := res.Valid + res.Flagged + res.Errors
	b := newBoard()
	out.Tally = Tally{Valid: res.Valid, Flagged: res.Flagged, Flags: map[string]int{}}
	for k, n := range res.Flags {
		out.Tally.Flags[k] = n
	}
	classes := res.Classes
	if u, ok := errors.AsType[*vote.UndecidedError](raceErr); ok && classes == nil {
		classes = u.Tally.Classes
	}
	classify(samples, committed, classes)
	for i := range samples {
		samples[i].Counted = i < committed
		if samples[i].Counted && samples[i].Key != "" {
			key, _ := strconv.ParseUint(samples[i].Key, 16, 64)
			b.add(i, key, canon[i], nil)
		}
	}
	out.Tally.Votes = b.tally()
	out.Samples = samples
	out.Launched, out.Errors, out.Cancelled = res.Launched, res.Errors, res.Cancelled
	out.Usage = Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens, ModelSeconds: res.Usage.Latency.Seconds()}
	top, lead := b.leader()
	out.Lead = lead
	switch {
	case raceErr == nil:
		out.Decided = true
		out.Winner = &Winner{Key: hexKey(res.Key), Canonical: res.Winner.canonical, Output: res.Winner.out,
			Votes: res.Votes[res.Key], FirstIndex: b.first[res.Key], DecidedAt: committed - 1}
		out.WinnerText = res.Winner.text
		out.Message = fmt.Sprintf("decided after %s: key %s leads every other answer by %d (%s, %d red-flagged)",
			words.Plural(committed, "sample"), hexKey(res.Key), lead, words.Plural(res.Votes[res.Key], "vote"), res.Flagged)
		return nil, out, nil
	case errors.Is(raceErr, vote.ErrUndecided):
		out.Need = st.vote.K - lead
		if len(b.votes) > 0 {
			out.Leader = hexKey(top)
		}
		out.Message = fmt.Sprintf("undecided, need more samples: the budget of %s was spent (%d valid, %d red-flagged) and no answer leads by %d; at least %s more could decide: call again with a larger max_samples, or change the prompt",
			words.Plural(st.vote.MaxSamples, "sample"), res.Valid, res.Flagged, st.vote.K, words.Plural(out.Need, "vote"))
		return nil, out, nil
	case errors.Is(raceErr, vote.ErrTooManyErrors):
		out.Need = st.vote.K - lead
		out.Message = fmt.Sprintf("the model failed too often (%s; the budget is max_errors): %v", words.Plural(res.Errors, "failed call"), raceErr)
		return failure(out.Message), out, nil
	}
	return nil, out, raceErr
}

// messages converts a prompt, refusing an empty one, an unknown role or
// too many messages.
func (s *Server) messages(in []Message) ([]llms.MessageContent, error) {
	switch {
	case len(in) == 0:
		return nil, fmt.Errorf("%w: messages is empty: give the prompt every sample sees", ErrArgument)
	case len(in) > s.cfg.MaxMessages:
		return nil, fmt.Errorf("%w: %d messages: this server takes at most %d", ErrArgument, len(in), s.cfg.MaxMessages)
	}
	out := make([]llms.MessageContent, len(in))
	for i, m := range in {
		var role llms.ChatMessageType
		switch m.Role {
		case "system":
			role = llms.ChatMessageTypeSystem
		case "user":
			role = llms.ChatMessageTypeHuman
		case "assistant":
			role = llms.ChatMessageTypeAI
		default:
			return nil, fmt.Errorf("%w: messages[%d].role %q: use system, user or assistant", ErrArgument, i, m.Role)
		}
		out[i] = llms.TextParts(role, m.Content)
	}
	return out, nil
}

// declared converts declared tools.
func declared(in []FunctionTool) ([]llms.Tool, error) {
	if len(in) > maxDeclaredTools {
		return nil, fmt.Errorf("%w: %d tools: at most %d", ErrArgument, len(in), maxDeclaredTools)
	}
	var out []llms.Tool
	for i, t := range in {
		if t.Type != "" && t.Type != "function" {
			return nil, fmt.Errorf("%w: tools[%d].type %q: only function tools", ErrArgument, i, t.Type)
		}
		if t.Function.Name == "" {
			return nil, fmt.Errorf("%w: tools[%d].function.name is empty", ErrArgument, i)
		}
		params := t.Function.Parameters
		if params == nil {
			params = map[string]any{"type": "object"}
		}
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: t.Function.Name, Description: t.Function.Description, Parameters: params}})
	}
	return out, nil
}

// identities names the models that draw samples, by sample index mod n.
func identities(m llms.Model) []string {
	ms := []llms.Model{m}
	if e, ok := m.(*maker.Ensemble); ok {
		ms = e.Members()
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = maker.ModelIdentity(m)
	}
	return ids
}
