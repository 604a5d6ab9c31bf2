package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/tmc/langchaingo/llms"
)

// WireVersion is the version of the Job and Reply formats this build
// writes and reads. A message of another version is refused
// (ErrUndecodable). Version 2 carries a wave: several samples per job,
// the prompt once.
const WireVersion = 2

// MaxJobSamples bounds the samples of one job (and so of one reply): a
// larger wave is sent as several jobs, and a job or reply with more is
// refused (ErrUndecodable).
const MaxJobSamples = 128

// Job is a wave of sample requests as it travels on the engine,
// JSON-encoded on subject mdap.jobs.<route token> of JobsStream with the
// NATS message id (Nats-Msg-Id) set to ID. It carries everything a
// stateless worker needs: the prompts (each once, however many samples
// share it), the call options common to the samples, and each sample's
// identity and what differs for it (its seed and temperature, or its own
// options). One worker draws every sample of a job and answers them in
// one Reply.
type Job struct {
	Version int `json:"v"`
	// ID names the job; its reply carries it, and the engine drops a
	// second publish of it (message-id deduplication).
	ID string `json:"id"`
	// Route is the identity of the model wanted (see Drawer.Model); a
	// worker serving another route refuses the job.
	Route string `json:"route"`
	// ReplyTo is the subject of RepliesStream the reply goes to.
	ReplyTo string `json:"reply_to"`
	// Lease is the job's lease key: a random secret that only the worker
	// the engine delivered the job to can read (on a server with roles,
	// nobody else can read a job). Its reply carries it back, and the
	// Drawer drops a reply without it (DrawerStats.Forged): a reply is
	// bound to the lease granted for its job.
	Lease string `json:"lease,omitempty"`
	// Prompts are the distinct prompts of the job's samples (one, for a
	// wave of one step).
	Prompts [][]Message `json:"prompts"`
	// Options are the call options the samples share.
	Options CallOptions `json:"options"`
	// Samples are the samples asked for, 1 to MaxJobSamples; the reply
	// answers them in this order.
	Samples []Sample `json:"samples"`
}

// Sample is one sample of a Job: its identity (maker.SampleIDFrom on the
// coordinator's context), put back in the worker's context so that a
// reproducible model answers the same on any machine, its prompt and
// what its call options change from the job's.
type Sample struct {
	Step  int `json:"s"`
	Index int `json:"i"`
	// Anon: the call carried no sample identity; none is invented.
	Anon bool `json:"a,omitempty"`
	// Prompt indexes Job.Prompts.
	Prompt int `json:"p,omitempty"`
	// Seed and Temperature replace the job's, when set (each sample of a
	// step has its own seed; the first is drawn at temperature 0).
	Seed        int      `json:"seed,omitempty"`
	Temperature *float64 `json:"t,omitempty"`
	// Options, when set, are this sample's whole options, in place of the
	// job's (and of Seed and Temperature).
	Options *CallOptions `json:"o,omitempty"`
}

// options returns the call options of sample s of job j.
func (j *Job) options(s Sample) CallOptions {
	if s.Options != nil {
		return *s.Options
	}
	o := j.Options
	if s.Seed != 0 {
		o.Seed = s.Seed
	}
	if s.Temperature != nil {
		o.Temperature = s.Temperature
	}
	return o
}

// Message is an llms.MessageContent on the wire, always in langchaingo's
// list-of-parts JSON form, so that every part (an empty text part too)
// comes back as it was sent.
type Message llms.MessageContent

// MarshalJSON writes the role and every part.
func (m Message) MarshalJSON() ([]byte, error) {
	parts := m.Parts
	if parts == nil {
		parts = []llms.ContentPart{}
	}
	return json.Marshal(struct {
		Role  llms.ChatMessageType `json:"role"`
		Parts []llms.ContentPart   `json:"parts"`
	}{m.Role, parts})
}

// UnmarshalJSON reads what MarshalJSON wrote (and langchaingo's own form).
func (m *Message) UnmarshalJSON(b []byte) error {
	var mc llms.MessageContent
	if err := mc.UnmarshalJSON(b); err != nil {
		return err
	}
	*m = Message(mc)
	return nil
}

// CallOptions are the llms call options a job carries: the ones that
// change a reply. The model name is the worker's own business, and
// streaming callbacks cannot travel: they are not sent. Temperature is a
// pointer so that an explicit 0 (the first sample of every step) is told
// apart from no temperature at all.
type CallOptions struct {
	MaxTokens         int                       `json:"max_tokens,omitempty"`
	Temperature       *float64                  `json:"temperature,omitempty"`
	TopP              float64                   `json:"top_p,omitempty"`
	TopK              int                       `json:"top_k,omitempty"`
	Seed              int                       `json:"seed,omitempty"`
	N                 int                       `json:"n,omitempty"`
	CandidateCount    int                       `json:"candidate_count,omitempty"`
	MinLength         int                       `json:"min_length,omitempty"`
	MaxLength         int                       `json:"max_length,omitempty"`
	RepetitionPenalty float64                   `json:"repetition_penalty,omitempty"`
	FrequencyPenalty  float64                   `json:"frequency_penalty,omitempty"`
	PresencePenalty   float64                   `json:"presence_penalty,omitempty"`
	StopWords         []string                  `json:"stop_words,omitempty"`
	JSONMode          bool                      `json:"json_mode,omitempty"`
	Tools             []llms.Tool               `json:"tools,omitempty"`
	ToolChoice        any                       `json:"tool_choice,omitempty"`
	Metadata          map[string]any            `json:"metadata,omitempty"`
	ResponseMIMEType  string                    `json:"response_mime_type,omitempty"`
	Functions         []llms.FunctionDefinition `json:"functions,omitempty"`
}

// callOptionsOf applies opts and keeps what travels.
func callOptionsOf(opts []llms.CallOption) CallOptions {
	o := llms.CallOptions{Temperature: math.NaN()}
	for _, fn := range opts {
		fn(&o)
	}
	c := CallOptions{
		MaxTokens: o.MaxTokens, TopP: o.TopP, TopK: o.TopK, Seed: o.Seed, N: o.N,
		CandidateCount: o.CandidateCount, MinLength: o.MinLength, MaxLength: o.MaxLength,
		RepetitionPenalty: o.RepetitionPenalty, FrequencyPenalty: o.FrequencyPenalty, PresencePenalty: o.PresencePenalty,
		StopWords: o.StopWords, JSONMode: o.JSONMode, Tools: o.Tools, ToolChoice: o.ToolChoice,
		Metadata: o.Metadata, ResponseMIMEType: o.ResponseMIMEType, Functions: o.Functions,
	}
	if !math.IsNaN(o.Temperature) {
		t := o.Temperature
		c.Temperature = &t
	}
	return c
}

// option is the llms.CallOption that sets what c holds, and nothing else,
// so the worker's model keeps its own defaults for the rest.
func (c CallOptions) option() llms.CallOption {
	return func(o *llms.CallOptions) {
		setInt := func(dst *int, v int) {
			if v != 0 {
				*dst = v
			}
		}
		setFloat := func(dst *float64, v float64) {
			if v != 0 {
				*dst = v
			}
		}
		setInt(&o.MaxTokens, c.MaxTokens)
		if c.Temperature != nil {
			o.Temperature = *c.Temperature
		}
		setFloat(&o.TopP, c.TopP)
		setInt(&o.TopK, c.TopK)
		setInt(&o.Seed, c.Seed)
		setInt(&o.N, c.N)
		setInt(&o.CandidateCount, c.CandidateCount)
		setInt(&o.MinLength, c.MinLength)
		setInt(&o.MaxLength, c.MaxLength)
		setFloat(&o.RepetitionPenalty, c.RepetitionPenalty)
		setFloat(&o.FrequencyPenalty, c.FrequencyPenalty)
		setFloat(&o.PresencePenalty, c.PresencePenalty)
		if c.StopWords != nil {
			o.StopWords = c.StopWords
		}
		if c.JSONMode {
			o.JSONMode = true
		}
		if c.Tools != nil {
			o.Tools = c.Tools
		}
		if c.ToolChoice != nil {
			o.ToolChoice = c.ToolChoice
		}
		if c.Metadata != nil {
			o.Metadata = c.Metadata
		}
		if c.ResponseMIMEType != "" {
			o.ResponseMIMEType = c.ResponseMIMEType
		}
		if c.Functions != nil {
			o.Functions = c.Functions
		}
	}
}

// Reply is a worker's answer to a Job, JSON-encoded on the job's ReplyTo
// subject with the NATS message id set to the job's lease key (its ID for
// a job without one): the engine keeps one reply per job even when a
// redelivered job is answered twice, a reply forged without the key cannot
// take the honest reply's message id, and the Drawer counts only the first
// reply bearing the job's lease that reaches it.
type Reply struct {
	Version int `json:"v"`
	// ID is the job's.
	ID string `json:"id"`
	// Lease is the job's Lease, echoed.
	Lease string `json:"lease,omitempty"`
	// Worker names the worker that drew the samples, for logs.
	Worker string `json:"worker,omitempty"`
	// Samples answer the job's Samples, in their order, one each.
	Samples []SampleReply `json:"samples"`
}

// SampleReply is the answer to one Sample of a Job.
type SampleReply struct {
	// Choices is the model's response; empty when Error is set.
	Choices []Choice `json:"choices,omitempty"`
	// Error is the model's failure.
	Error *ReplyError `json:"error,omitempty"`
	// Took is how long the model call took on the worker.
	Took time.Duration `json:"took_ns,omitempty"`
}

// Choice is an llms.ContentChoice on the wire. GenerationInfo's numbers
// come back as float64 (token counts read the same).
type Choice struct {
	Content          string         `json:"content"`
	StopReason       string         `json:"stop_reason,omitempty"`
	ToolCalls        []ToolCall     `json:"tool_calls,omitempty"`
	FuncCall         *FunctionCall  `json:"func_call,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	GenerationInfo   map[string]any `json:"generation_info,omitempty"`
}

// ToolCall is an llms.ToolCall on the wire.
type ToolCall struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Function *FunctionCall `json:"function,omitempty"`
}

// FunctionCall is an llms.FunctionCall on the wire.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ReplyError is a model's failure on the wire. Code is the llms.ErrorCode
// of an *llms.Error (a rate limit, say), RetryAfter its delay in seconds,
// Kind the name of the models sentinel it wraps, of remoteKinds.
type ReplyError struct {
	Message    string  `json:"message"`
	Code       string  `json:"code,omitempty"`
	RetryAfter float64 `json:"retry_after_s,omitempty"`
	Kind       string  `json:"kind,omitempty"`
}

// remoteKinds are the models sentinels a worker's error carries across
// the wire by name, so that errors.Is sees them in the coordinator's
// error as in a local run's (maker run's advice on a refusal of native
// tools). A remote error is never maker.ErrPermanent whatever its kind:
// another worker's model may serve the step.
var remoteKinds = map[string]error{"tools_unsupported": models.ErrToolsUnsupported}

// kindOf is the name in remoteKinds of the sentinel err wraps, or "".
func kindOf(err error) string {
	for name, kind := range remoteKinds {
		if errors.Is(err, kind) {
			return name
		}
	}
	return ""
}

// withKind is err with the sentinel remoteKinds names kind in its chain
// too (its message unchanged); err itself for a kind it does not know.
func withKind(err error, kind string) error {
	if k := remoteKinds[kind]; k != nil {
		return &kindError{err, k}
	}
	return err
}

// kindError is a remote error with the sentinel of its kind.
type kindError struct{ err, kind error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// sampleReplyOf turns a model's result into a SampleReply.
func sampleReplyOf(resp *llms.ContentResponse, err error, took time.Duration) SampleReply {
	r := SampleReply{Took: took}
	if err != nil {
		r.Error = &ReplyError{Message: err.Error(), Kind: kindOf(err)}
		if le := asLLMError(err); le != nil {
			r.Error.Code = string(le.Code)
		}
		if d, ok := maker.RetryAfter(err); ok {
			r.Error.RetryAfter = d.Seconds()
		}
		return r
	}
	if resp == nil {
		return r
	}
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		wc := Choice{Content: c.Content, StopReason: c.StopReason, ReasoningContent: c.ReasoningContent, GenerationInfo: jsonable(c.GenerationInfo)}
		if c.FuncCall != nil {
			wc.FuncCall = &FunctionCall{Name: c.FuncCall.Name, Arguments: c.FuncCall.Arguments}
		}
		for _, tc := range c.ToolCalls {
			w := ToolCall{ID: tc.ID, Type: tc.Type}
			if tc.FunctionCall != nil {
				w.Function = &FunctionCall{Name: tc.FunctionCall.Name, Arguments: tc.FunctionCall.Arguments}
			}
			wc.ToolCalls = append(wc.ToolCalls, w)
		}
		r.Choices = append(r.Choices, wc)
	}
	return r
}

// jsonable keeps the entries of info that encode as JSON.
func jsonable(info map[string]any) map[string]any {
	if len(info) == 0 {
		return nil
	}
	out := make(map[string]any, len(info))
	for k, v := range info {
		if _, err := json.Marshal(v); err == nil {
			out[k] = v
		}
	}
	return out
}

// response turns a SampleReply from worker back into what the model call
// returns.
func (r SampleReply) response(route, worker string) (*llms.ContentResponse, error) {
	if e := r.Error; e != nil {
		if e.Code == "" {
			return nil, withKind(fmt.Errorf("%w: %s (worker %s): %s", ErrRemote, route, worker, e.Message), e.Kind)
		}
		le := &llms.Error{Code: llms.ErrorCode(e.Code), Message: e.Message, Provider: "worker " + worker}
		if e.RetryAfter > 0 {
			le.Details = map[string]any{"retry_after": strconv.FormatFloat(e.RetryAfter, 'f', -1, 64)}
		}
		return nil, withKind(fmt.Errorf("%w: %s: %w", ErrRemote, route, le), e.Kind)
	}
	resp := &llms.ContentResponse{Choices: make([]*llms.ContentChoice, 0, len(r.Choices))}
	for _, c := range r.Choices {
		cc := &llms.ContentChoice{Content: c.Content, StopReason: c.StopReason, ReasoningContent: c.ReasoningContent, GenerationInfo: c.GenerationInfo}
		if c.FuncCall != nil {
			cc.FuncCall = &llms.FunctionCall{Name: c.FuncCall.Name, Arguments: c.FuncCall.Arguments}
		}
		for _, tc := range c.ToolCalls {
			t := llms.ToolCall{ID: tc.ID, Type: tc.Type}
			if tc.Function != nil {
				t.FunctionCall = &llms.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}
			}
			cc.ToolCalls = append(cc.ToolCalls, t)
		}
		resp.Choices = append(resp.Choices, cc)
	}
	return resp, nil
}

// oneToken reports whether s is one NATS subject token: not empty, no
// dot, no wildcard, no white space.
func oneToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) }) < 0
}

// decodeJob reads a job from the engine: ErrUndecodable unless it is JSON
// of this WireVersion with an id, a Drawer's reply subject for it, 1 to MaxJobSamples
// samples of non-negative identities, and a prompt for each.
func decodeJob(data []byte) (Job, error) {
	var job Job
	if err := json.Unmarshal(data, &job); err != nil {
		return Job{}, fmt.Errorf("%w: job: %w", ErrUndecodable, err)
	}
	if job.Version != WireVersion || job.ID == "" || job.ReplyTo == "" {
		return Job{}, fmt.Errorf("%w: job of version %d, id %q, reply subject %q: want version %d with both", ErrUndecodable, job.Version, job.ID, job.ReplyTo, WireVersion)
	}
	if tok, id, ok := strings.Cut(strings.TrimPrefix(job.ReplyTo, repliesSubject), "."); !strings.HasPrefix(job.ReplyTo, repliesSubject) || !ok || !isReplyToken(tok) || id != job.ID || !oneToken(id) {
		// What a Drawer writes (wave.go), its job id one subject token:
		// anything else is a subject no worker may publish to, which
		// would hold the worker until its publication timed out (or fail
		// it after the model call), for a coordinator that never reads it.
		return Job{}, fmt.Errorf("%w: job %s: reply subject %q: want %s<drawer token>.%s", ErrUndecodable, job.ID, job.ReplyTo, repliesSubject, job.ID)
	}
	if n := len(job.Samples); n == 0 || n > MaxJobSamples || len(job.Prompts) > n {
		return Job{}, fmt.Errorf("%w: job %s asks for %d samples with %d prompts: want 1 to %d samples and no more prompts than samples", ErrUndecodable, job.ID, n, len(job.Prompts), MaxJobSamples)
	}
	for i, s := range job.Samples {
		if s.Step < 0 || s.Index < 0 || s.Prompt < 0 || s.Prompt >= len(job.Prompts) {
			return Job{}, fmt.Errorf("%w: job %s, sample %d: step %d, index %d, prompt %d of %d", ErrUndecodable, job.ID, i, s.Step, s.Index, s.Prompt, len(job.Prompts))
		}
	}
	return job, nil
}

// decodeReply reads a reply from the engine: ErrUndecodable unless it is
// JSON of this WireVersion with an id and 1 to MaxJobSamples answers.
func decodeReply(data []byte) (Reply, error) {
	var r Reply
	if err := json.Unmarshal(data, &r); err != nil {
		return Reply{}, fmt.Errorf("%w: reply: %w", ErrUndecodable, err)
	}
	if r.Version != WireVersion || r.ID == "" {
		return Reply{}, fmt.Errorf("%w: reply of version %d, id %q: want version %d with an id", ErrUndecodable, r.Version, r.ID, WireVersion)
	}
	if n := len(r.Samples); n == 0 || n > MaxJobSamples {
		return Reply{}, fmt.Errorf("%w: reply %s answers %d samples: want 1 to %d", ErrUndecodable, r.ID, n, MaxJobSamples)
	}
	return r, nil
}

// asLLMError finds an *llms.Error in err's chain.
func asLLMError(err error) *llms.Error {
	var le *llms.Error
	if errors.As(err, &le) {
		return le
	}
	return nil
}
