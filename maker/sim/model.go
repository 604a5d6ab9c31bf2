package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mdap-go/mdap/internal/wait"
	"github.com/mdap-go/mdap/maker"

	"github.com/tmc/langchaingo/llms"
)

// Query is what the model asks its [Oracle] about one call: the request's
// text and, when the caller gave one, the sample's identity.
type Query struct {
	// Prompt is the request's text as [PromptText] joins it.
	Prompt string
	// Step and Index are the sample's identity (maker.SampleIDFrom on the
	// call's context); Identified says whether there was one. Over HTTP
	// (maker serve-sim) the server derives them from the prompt.
	Step, Index int
	Identified  bool
}

// Oracle is what a task provides so that the simulated model can answer
// its step prompts. Both methods must be safe for concurrent use,
// deterministic (the same arguments always give the same text) and cheap
// next to a model call. A built-in task's oracle reads the step from the
// prompt text (so it also answers over HTTP); a custom task's oracle may
// instead read the task's own state, which the solver does not change
// while a step's samples are drawn, or use [OracleFunc].
type Oracle interface {
	// Correct returns the correct reply to q, in a format the task's
	// parser accepts. An error means the query is not one of the task's
	// steps; the model then fails the call with ErrUnknownPrompt.
	Correct(q Query) (string, error)

	// Wrong returns the variant-th wrong reply to q (variant >= 0): a
	// well-formed reply the task's parser accepts, that means another step
	// than Correct's. Variants 0, 1, 2, ... must mean distinct steps as far
	// as the task has distinct wrong answers; beyond that they may repeat
	// (an oracle with n wrong answers typically uses variant mod n).
	// Variant 0 is the model's favourite mistake: a concentrated mix
	// always gives it.
	Wrong(q Query, variant int) (string, error)
}

// Surfacer is an optional Oracle extension for Config.SurfaceForms: an
// oracle whose right answer can be written in several surface forms
// (case, spacing, punctuation, number formats, a set's order) that a
// task's declared matchers (docs/matching.md) count as one answer.
// Surface returns the correct reply to q in form form (>= 0; the oracle
// may wrap it modulo its own count); every form must mean Correct's
// answer under the task's matchers, and differ from it in bytes.
type Surfacer interface {
	Surface(q Query, form int) (string, error)
}

// Checker is an optional Oracle extension: an oracle that can tell before
// any draw that it cannot answer (a spec task with no script). New
// refuses it with Check's error.
type Checker interface {
	Check() error
}

// Malformer is an optional Oracle extension: an oracle that implements it
// writes the model's malformed red-flag replies itself, so that they
// exercise the task's own format check (a move of two numbers, a peg out of
// range, ...). variant is drawn uniformly from [0, 64); the oracle may
// wrap it modulo its own count. Every text returned must be refused by the
// task's parser. Without it the model's malformed replies are generic:
// prose with no answer, unterminated JSON, or the correct answer stripped
// of its brackets.
type Malformer interface {
	Malformed(q Query, variant int) (string, error)
}

// malformedVariants is the range a malformed reply's variant is drawn from
// when the oracle is a [Malformer].
const malformedVariants = 64

// OracleFunc is an [Oracle] for a task whose correct reply is a JSON
// value: correct returns it (as text), and the variant-th wrong reply is
// the same JSON with one leaf changed: the first string leaf (depth first,
// keys in sorted order) gets the suffix ".wrongN", or else the first number
// leaf is moved by N+1, or else a key "wrong" is added to an object; N is
// the variant. So wrong replies are well formed, distinct per variant, and
// vote against the right one. A correct reply that is not JSON makes Wrong
// fail with ErrUnknownPrompt.
type OracleFunc func(q Query) (string, error)

// Correct calls f.
func (f OracleFunc) Correct(q Query) (string, error) { return f(q) }

// Wrong changes one leaf of f's JSON reply; see [OracleFunc].
func (f OracleFunc) Wrong(q Query, variant int) (string, error) {
	text, err := f(q)
	if err != nil {
		return "", err
	}
	return MutateJSON(text, variant)
}

// Outcome is what the simulated model meant a reply to be. It is reported
// in GenerationInfo under [InfoOutcome] for tests and benchmarks.
type Outcome string

// The outcomes of a call that returns a reply.
const (
	OutcomeCorrect   Outcome = "correct"   // the oracle's correct reply
	OutcomeWrong     Outcome = "wrong"     // one of the oracle's wrong replies
	OutcomeOverlong  Outcome = "overlong"  // a red flag: over the token cap
	OutcomeCutOff    Outcome = "cut_off"   // a red flag, or a valid reply cut at the cap
	OutcomeMalformed Outcome = "malformed" // a red flag: in no acceptable format
)

// InfoOutcome is the GenerationInfo key of a reply's [Outcome] (a string).
const InfoOutcome = "SimOutcome"

// The stop reasons the model reports, as OpenAI does.
const (
	stopReasonStop   = "stop"
	stopReasonLength = "length"
)

// Model is the simulated model: an [llms.Model] safe for concurrent use.
// Build one with [New].
type Model struct {
	oracle Oracle
	cfg    Config
	calls  atomic.Uint64
	// memo is the last request's prompt text and hash: a solver asks
	// every sample of a step with the same messages, so the text is
	// joined and hashed once per step, not once per sample.
	memo atomic.Pointer[promptMemo]
}

// promptMemo is a request's text parts, their joined text and its hash.
type promptMemo struct {
	parts  []string
	prompt string
	hash   uint64
}

// matches reports whether messages have exactly the memo's text parts
// (strings that share their bytes compare in O(1)).
func (pm *promptMemo) matches(messages []llms.MessageContent) bool {
	i := 0
	for _, msg := range messages {
		for _, p := range msg.Parts {
			t, ok := p.(llms.TextContent)
			if !ok {
				continue
			}
			if i >= len(pm.parts) || pm.parts[i] != t.Text {
				return false
			}
			i++
		}
	}
	return i == len(pm.parts)
}

// prompt returns PromptText(messages) and its hash, from the memo when the
// messages are the last request's.
func (m *Model) prompt(messages []llms.MessageContent) (string, uint64) {
	if pm := m.memo.Load(); pm != nil && pm.matches(messages) {
		return pm.prompt, pm.hash
	}
	pm := &promptMemo{prompt: PromptText(messages)}
	pm.hash = hashString(pm.prompt)
	for _, msg := range messages {
		for _, p := range msg.Parts {
			if t, ok := p.(llms.TextContent); ok {
				pm.parts = append(pm.parts, t.Text)
			}
		}
	}
	m.memo.Store(pm)
	return pm.prompt, pm.hash
}

var _ llms.Model = (*Model)(nil)

// New returns a simulated model that answers oracle's prompts as cfg says.
// Errors: [ErrConfig] (wrapped) when cfg is invalid (see [Config.Validate])
// or oracle is nil; a [Checker] oracle's own error when it cannot answer.
// Cost: O(1); the model holds no per-call state.
func New(oracle Oracle, cfg Config) (*Model, error) {
	if oracle == nil {
		return nil, fmt.Errorf("%w: nil oracle", ErrConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if c, ok := oracle.(Checker); ok {
		if err := c.Check(); err != nil {
			return nil, err
		}
	}
	if _, ok := oracle.(Surfacer); cfg.SurfaceForms > 1 && !ok {
		return nil, fieldErr("SurfaceForms", cfg.SurfaceForms, fmt.Sprintf("the oracle (%T) writes one form: give an oracle that implements sim.Surfacer, or 0", oracle))
	}
	return &Model{oracle: oracle, cfg: cfg}, nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Identity names the model and every setting that changes its answers
// (latency does not), for the journal: a run resumed with another seed or
// error model is refused. It implements maker.Identifier.
func (m *Model) Identity() string {
	c := m.cfg
	id := fmt.Sprintf("sim seed=%d p=%g wrong_answers=%d concentration=%g flag_rate=%g flags=%g/%g/%g error_rate=%g",
		c.Seed, c.P, c.WrongAnswers, c.Concentration, c.FlagRate, c.Flags.Overlong, c.Flags.CutOff, c.Flags.Malformed, c.ErrorRate)
	if c.DifficultySpread > 0 || c.HardAgree > 0 {
		// Only when set, so the identity of a model without them (and
		// the journals that recorded it) stays as it was.
		id += fmt.Sprintf(" difficulty_spread=%g hard_agree=%g", c.DifficultySpread, c.HardAgree)
	}
	if c.SurfaceForms > 1 {
		id += fmt.Sprintf(" surface_forms=%d", c.SurfaceForms)
	}
	return id + c.driftText()
}

// Calls returns the number of GenerateContent calls made so far, failed
// ones included. It also numbers the calls without a sample identity.
func (m *Model) Calls() uint64 { return m.calls.Load() }

// PromptText returns the text the oracle reads for messages: the text
// parts of every message, in order, joined by a blank line ("\n\n"). Other
// parts (images, tool calls, tool results) are left out. Cost: linear in
// the text.
func PromptText(messages []llms.MessageContent) string {
	var b strings.Builder
	size := 0
	for _, msg := range messages {
		for _, p := range msg.Parts {
			if t, ok := p.(llms.TextContent); ok {
				size += len(t.Text) + 2
			}
		}
	}
	b.Grow(size)
	first := true
	for _, msg := range messages {
		for _, p := range msg.Parts {
			t, ok := p.(llms.TextContent)
			if !ok {
				continue
			}
			if !first {
				b.WriteString("\n\n")
			}
			first = false
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Call implements the deprecated single-prompt method of [llms.Model]
// through [llms.GenerateFromSinglePrompt]: prompt is sent as one human
// message and the reply's text returned. Errors are GenerateContent's.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent answers one request with one choice, or, for a request
// with a sample identity and llms.WithN(n > 1) unless Config.IgnoreN, with
// n choices (see choices); see the package documentation for how the reply
// is drawn. Of the call options it reads only N and MaxTokens (0 means maker.DefaultMaxTokens for red-flag replies and
// no limit for valid ones); temperature, seed and tools are ignored. The
// sample's identity comes from the context (maker.SampleIDFrom), where the
// solver puts it.
//
// A valid reply longer than a positive MaxTokens is cut at the cap, with
// StopReason "length" and outcome OutcomeCutOff, as a real provider would.
// An overlong red-flag reply exceeds the cap on purpose: it models a
// provider that does not enforce it.
//
// Errors: ctx.Err() if ctx is done before the call or during its latency;
// [ErrUnknownPrompt] wrapping the oracle's error (returned at once, before
// any latency); [ErrProvider] with probability Config.ErrorRate. Safe for
// concurrent use; the result depends only on the model's Config, the
// messages and the sample identity (see the package documentation).
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	n := m.calls.Add(1) - 1
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts := readOptions(options)
	if id, ok := maker.SampleIDFrom(ctx); ok && opts.N > 1 && !m.cfg.IgnoreN {
		return m.choices(ctx, messages, opts, id)
	}
	return m.generate(ctx, messages, opts, n)
}

// readOptions applies options to a zero llms.CallOptions and returns it.
// The options write through a pointer the compiler cannot follow, so the
// struct they write (a few hundred bytes) would be allocated on every
// call; it comes from a pool instead.
func readOptions(options []llms.CallOption) llms.CallOptions {
	p := callOptionsPool.Get().(*llms.CallOptions)
	*p = llms.CallOptions{}
	for _, o := range options {
		o(p)
	}
	opts := *p
	*p = llms.CallOptions{} // hold nothing of the call's while pooled
	callOptionsPool.Put(p)
	return opts
}

var callOptionsPool = sync.Pool{New: func() any { return new(llms.CallOptions) }}

// choices answers a request for opts.N choices as an OpenAI-compatible
// server does: choice j is the sample of index id.Index+j, drawn
// concurrently, exactly as if asked alone; the usage is the request's,
// on every choice (the prompt counted once, the completion tokens
// summed). The first failed choice's error fails the request.
func (m *Model) choices(ctx context.Context, messages []llms.MessageContent, opts llms.CallOptions, id maker.SampleID) (*llms.ContentResponse, error) {
	resps := make([]*llms.ContentResponse, opts.N)
	errs := make([]error, opts.N)
	var wg sync.WaitGroup
	for j := range opts.N {
		wg.Go(func() {
			one := opts
			one.N = 1
			resps[j], errs[j] = m.generate(maker.WithSampleID(ctx, maker.SampleID{Step: id.Step, Index: id.Index + j}), messages, one, 0)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, e := range errs {
			if e != nil {
				return nil, e
			}
		}
	}
	out := &llms.ContentResponse{Choices: make([]*llms.ContentChoice, opts.N)}
	completion := 0
	for j, r := range resps {
		out.Choices[j] = r.Choices[0]
		ct, _ := r.Choices[0].GenerationInfo["CompletionTokens"].(int)
		completion += ct
	}
	prompt, _ := out.Choices[0].GenerationInfo["PromptTokens"].(int)
	for _, c := range out.Choices {
		c.GenerationInfo["PromptTokens"] = prompt
		c.GenerationInfo["CompletionTokens"] = completion
		c.GenerationInfo["TotalTokens"] = prompt + completion
	}
	return out, nil
}

// generate draws one choice; n numbers a call without a sample identity.
func (m *Model) generate(ctx context.Context, messages []llms.MessageContent, opts llms.CallOptions, n uint64) (*llms.ContentResponse, error) {
	prompt, promptHash := m.prompt(messages)
	q := Query{Prompt: prompt}
	if id, ok := maker.SampleIDFrom(ctx); ok {
		q.Step, q.Index, q.Identified = id.Step, id.Index, true
	}
	correct, err := m.oracle.Correct(q)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknownPrompt, err)
	}

	var st stream
	if q.Identified {
		st = newStream(m.cfg.Seed, domainSample, uint64(q.Step), uint64(q.Index), promptHash)
	} else {
		st = newStream(m.cfg.Seed, domainCounter, n, 0, promptHash)
	}

	if err := wait.Sleep(ctx, m.cfg.Latency.draw(st)); err != nil {
		return nil, err
	}

	c := m.cfg
	u := st.unit(slotPartition)
	switch {
	case u < c.ErrorRate:
		return nil, fmt.Errorf("%w (call %d)", ErrProvider, n)
	case u < c.ErrorRate+c.FlagRate:
		return m.flagged(q, correct, st, opts.MaxTokens)
	}
	p := c.P
	if len(c.Drift) > 0 && q.Identified {
		p = c.PAt(q.Step)
	}
	if c.DifficultySpread > 0 {
		p = m.stepPHash(q, promptHash)
	}
	text, outcome := correct, OutcomeCorrect
	if st.unit(slotCorrect) >= p {
		outcome = OutcomeWrong
		variant := 0
		if p >= Hard || st.unit(slotHardAgree) >= c.HardAgree {
			variant = m.wrongVariant(st)
		}
		if text, err = m.oracle.Wrong(q, variant); err != nil {
			return nil, fmt.Errorf("%w: wrong reply: %w", ErrUnknownPrompt, err)
		}
	} else if c.SurfaceForms > 1 {
		form := int(st.unit(slotSurface) * float64(c.SurfaceForms))
		if text, err = m.oracle.(Surfacer).Surface(q, form); err != nil {
			return nil, fmt.Errorf("%w: surface form %d: %w", ErrUnknownPrompt, form, err)
		}
	}
	stop := stopReasonStop
	if limit := opts.MaxTokens; limit > 0 && maker.EstimateTokens(text) > limit {
		text, stop, outcome = truncate(text, 4*limit), stopReasonLength, OutcomeCutOff
	}
	return reply(prompt, text, stop, outcome), nil
}

// StepP returns the probability of a right valid reply at the step a query
// asks, as the model draws it: Config.PAt(step) without a DifficultySpread, else
// the step's own draw (see Config.DifficultySpread), the same for every
// sample of the step. For tests and benchmarks that want to know which
// steps were hard.
func (m *Model) StepP(q Query) float64 {
	if m.cfg.DifficultySpread <= 0 {
		if q.Identified {
			return m.cfg.PAt(q.Step)
		}
		return m.cfg.P
	}
	return m.stepP(q, q.Prompt)
}

func (m *Model) stepP(q Query, prompt string) float64 { return m.stepPHash(q, hashString(prompt)) }

func (m *Model) stepPHash(q Query, promptHash uint64) float64 {
	step := uint64(0)
	if q.Identified {
		step = uint64(q.Step)
	}
	st := newStream(m.cfg.Seed, domainStep, step, 0, promptHash)
	return stepP(st, m.cfg.PAt(int(step)), m.cfg.DifficultySpread)
}

// wrongVariant draws the variant of a wrong reply from the wrong-answer mix.
func (m *Model) wrongVariant(st stream) int {
	if st.unit(slotConcentration) < m.cfg.Concentration {
		return 0
	}
	return st.intn(slotVariant, max(1, m.cfg.WrongAnswers))
}

// flagged builds a red-flag reply of the kind the flag mix draws.
func (m *Model) flagged(q Query, correct string, st stream, maxTokens int) (*llms.ContentResponse, error) {
	prompt := q.Prompt
	limit := maxTokens
	if limit <= 0 {
		limit = maker.DefaultMaxTokens
	}
	w := m.cfg.Flags
	if w.Overlong+w.CutOff+w.Malformed == 0 {
		w = FlagMix{1, 1, 1}
	}
	k := st.unit(slotFlagKind) * (w.Overlong + w.CutOff + w.Malformed)
	rng := st.rng(slotText)
	switch {
	case k < w.Overlong:
		wrong, err := m.oracle.Wrong(q, m.wrongVariant(st))
		if err != nil {
			return nil, fmt.Errorf("%w: wrong reply: %w", ErrUnknownPrompt, err)
		}
		// A rambling reply of 4×tokens bytes (so exactly tokens tokens)
		// that ends with a wrong answer.
		tokens := limit + 1 + st.intn(slotFlagAux, max(1, limit/2))
		tail := "\n\n" + wrong
		text := filler(rng, max(0, 4*tokens-len(tail))) + tail
		return reply(prompt, text, stopReasonStop, OutcomeOverlong), nil
	case k < w.Overlong+w.CutOff:
		// Reasoning, then the correct answer cut halfway, exactly limit
		// tokens in all.
		total := 4 * limit
		keep := min((len(correct)+1)/2, total)
		for keep > 0 && keep < len(correct) && !utf8RuneStart(correct[keep]) {
			keep--
		}
		text := filler(rng, total-keep) + correct[:keep]
		return reply(prompt, text, stopReasonLength, OutcomeCutOff), nil
	default:
		text, err := m.malformed(q, correct, st)
		if err != nil {
			return nil, err
		}
		return reply(prompt, text, stopReasonStop, OutcomeMalformed), nil
	}
}

// genericMalformed are the malformed replies of an oracle that is not a
// Malformer: prose with no answer, unterminated JSON, and (the third, built
// in malformed) the correct reply stripped of its brackets and braces.
var genericMalformed = []string{
	"I am not sure which step comes next. Let me think about it again before answering.",
	`{"answer": "the next step is`,
}

func (m *Model) malformed(q Query, correct string, st stream) (string, error) {
	if mf, ok := m.oracle.(Malformer); ok {
		text, err := mf.Malformed(q, st.intn(slotFlagAux, malformedVariants))
		if err != nil {
			return "", fmt.Errorf("%w: malformed reply: %w", ErrUnknownPrompt, err)
		}
		return text, nil
	}
	v := st.intn(slotFlagAux, len(genericMalformed)+1)
	if v < len(genericMalformed) {
		return genericMalformed[v], nil
	}
	stripped := strings.Map(func(r rune) rune {
		switch r {
		case '[', ']', '{', '}':
			return -1
		}
		return r
	}, correct)
	if stripped == correct || strings.TrimSpace(stripped) == "" {
		return genericMalformed[0], nil
	}
	return stripped, nil
}

// reply wraps text in a one-choice response with OpenAI-style usage.
func reply(prompt, text, stop string, outcome Outcome) *llms.ContentResponse {
	in, out := maker.EstimateTokens(prompt), maker.EstimateTokens(text)
	// The response, its one-choice slice and the choice in one allocation.
	r := &struct {
		resp    llms.ContentResponse
		choices [1]*llms.ContentChoice
		choice  llms.ContentChoice
	}{}
	r.choice = llms.ContentChoice{
		Content:    text,
		StopReason: stop,
		GenerationInfo: map[string]any{
			"PromptTokens":     in,
			"CompletionTokens": out,
			"TotalTokens":      in + out,
			InfoOutcome:        outcome.boxed(),
		},
	}
	r.choices[0] = &r.choice
	r.resp.Choices = r.choices[:]
	return &r.resp
}

// boxed returns o as a string in an interface, boxed once per outcome.
func (o Outcome) boxed() any {
	for i, known := range outcomes {
		if o == known {
			return boxedOutcomes[i]
		}
	}
	return string(o)
}

var (
	outcomes      = [...]Outcome{OutcomeCorrect, OutcomeWrong, OutcomeOverlong, OutcomeCutOff, OutcomeMalformed}
	boxedOutcomes = func() (b [len(outcomes)]any) {
		for i, o := range outcomes {
			b[i] = string(o)
		}
		return b
	}()
)

// truncate cuts s to at most n bytes, at a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
