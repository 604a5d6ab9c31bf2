package maker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// counter is a toy task: the state is a number, each step must answer the
// next one, and it is done at target.
type counter struct {
	n, target int
	wrong     int // winners that were not n+1
	observed  []string
}

func (c *counter) Fingerprint() string { return fmt.Sprintf("counter:%d", c.target) }

func (c *counter) Prompt(last *intent.Observation) []llms.MessageContent {
	text := fmt.Sprintf("value=%d", c.n)
	if last != nil {
		text += "\nobservation: " + last.Text()
	}
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

func (c *counter) Decode(r Reply) (intent.Output, error) {
	out, err := DecodeReply(r)
	if err != nil {
		return out, err
	}
	if out.Intent != nil {
		return out, nil
	}
	m, ok := out.Value.(map[string]any)
	if !ok {
		return out, fmt.Errorf("%w: want an object", ErrFormat)
	}
	if _, ok := m["next"].(json.Number); !ok {
		return out, fmt.Errorf("%w: want a number in next", ErrFormat)
	}
	return out, nil
}

func (c *counter) Apply(w intent.Output, obs *intent.Observation) (bool, error) {
	if obs != nil {
		c.observed = append(c.observed, obs.Text())
	}
	if w.Intent != nil {
		return false, nil
	}
	n, err := strconv.Atoi(string(w.Value.(map[string]any)["next"].(json.Number)))
	if err != nil {
		return false, err
	}
	if n != c.n+1 {
		c.wrong++
	}
	c.n = n
	return c.n >= c.target, nil
}

// scripted is a model whose reply is a pure function of the sample's
// identity and the prompt: safe for concurrent use, deterministic.
type scripted struct {
	reply func(id SampleID, prompt string) (string, string) // text, stop reason
	calls atomic.Int64
}

var valueRE = regexp.MustCompile(`value=(\d+)`)

func (m *scripted) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls.Add(1)
	id, _ := SampleIDFrom(ctx)
	prompt := msgs[len(msgs)-1].Parts[0].(llms.TextContent).Text
	text, stop := m.reply(id, prompt)
	if stop == "error" {
		return nil, errors.New("provider down")
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content: text, StopReason: stop,
		GenerationInfo: map[string]any{"PromptTokens": 10, "CompletionTokens": len(text) / 4},
	}}}, nil
}

func (m *scripted) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func current(prompt string) int {
	n, _ := strconv.Atoi(valueRE.FindStringSubmatch(prompt)[1])
	return n
}

// noisy answers right except: sample 1 of every step is wrong, sample 2 of
// every third step is malformed, sample 3 of every fifth step is cut off.
func noisy(id SampleID, prompt string) (string, string) {
	n := current(prompt)
	switch {
	case id.Index == 1:
		return fmt.Sprintf(`{"next": %d}`, n+7), "stop"
	case id.Index == 2 && id.Step%3 == 0:
		return `{"next": `, "stop"
	case id.Index == 3 && id.Step%5 == 0:
		return fmt.Sprintf(`{"next": %d}`, n+1), "length"
	}
	return fmt.Sprintf("```json\n{\"next\": %d}\n```", n+1), "stop"
}

func TestSolveVotesOutWrongAnswers(t *testing.T) {
	for _, parallel := range []int{1, 3, 8} {
		task := &counter{target: 30}
		s := &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: parallel}}, Model: &scripted{reply: noisy}}
		rep, err := s.Solve(context.Background(), task)
		require.NoError(t, err)
		assert.Equal(t, 30, task.n)
		assert.Zero(t, task.wrong, "k=2 must outvote the single wrong sample")
		assert.True(t, rep.Done)
		assert.Equal(t, 30, rep.Steps)
		assert.Equal(t, 10, rep.Flags["unparseable"], "steps 0,3,...,27 have a malformed sample 2")
		assert.Equal(t, 6, rep.Flags["cut off"], "steps 0,5,...,25 have a cut-off sample 3")
		assert.Equal(t, rep.Launched, rep.Valid+rep.Flagged+rep.Errors+rep.Cancelled)
		assert.Equal(t, 30, sum(rep.SampleHistogram))
	}
}

func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestSolveK1TakesFirstAnswer(t *testing.T) {
	// With k = 1 and the first sample always wrong, every step is wrong:
	// voting is what makes the difference.
	wrongFirst := func(id SampleID, p string) (string, string) {
		if id.Index == 0 {
			return fmt.Sprintf(`{"next": %d}`, current(p)+2), "stop"
		}
		return fmt.Sprintf(`{"next": %d}`, current(p)+1), "stop"
	}
	task := &counter{target: 20}
	_, err := (&Solver{Config: Config{Vote: vote.Config{K: 1, Parallel: 1}}, Model: &scripted{reply: wrongFirst}}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, 10, task.wrong)
}

func TestSolveOverlongAndEmptyFlags(t *testing.T) {
	m := &scripted{reply: func(id SampleID, p string) (string, string) {
		switch id.Index {
		case 0:
			return "   ", "stop"
		case 1:
			return fmt.Sprintf(`{"next": %d, "pad": %q}`, current(p)+1, strings.Repeat("x", 400)), "stop"
		}
		return fmt.Sprintf(`{"next": %d}`, current(p)+1), "stop"
	}}
	task := &counter{target: 3}
	rep, err := (&Solver{Config: Config{MaxTokens: 50, Vote: vote.Config{K: 2}}, Model: m}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Flags["empty"])
	assert.Equal(t, 3, rep.Flags["overlong"])

	// Rules can be switched off: an overlong reply then votes.
	task = &counter{target: 3}
	rep, err = (&Solver{Config: Config{MaxTokens: 50, Flags: FlagRules{AllowOverlong: true}, Vote: vote.Config{K: 2}}, Model: m}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Zero(t, rep.Flags["overlong"])
}

func TestSolveFormatFlag(t *testing.T) {
	m := &scripted{reply: func(id SampleID, p string) (string, string) {
		if id.Index == 0 {
			return `{"next": "one"}`, "stop"
		}
		return fmt.Sprintf(`{"next": %d}`, current(p)+1), "stop"
	}}
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 1}}, Model: m}).Solve(context.Background(), &counter{target: 4})
	require.NoError(t, err)
	assert.Equal(t, 4, rep.Flags["format"])
}

func TestSolveUndecidedFailsWithTally(t *testing.T) {
	// Two answers alternate forever: no k-lead, the budget runs out.
	m := &scripted{reply: func(id SampleID, p string) (string, string) {
		return fmt.Sprintf(`{"next": %d}`, current(p)+1+id.Index%2), "stop"
	}}
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 3, MaxSamples: 20}}, Model: m}).Solve(context.Background(), &counter{target: 4})
	require.ErrorIs(t, err, vote.ErrUndecided)
	require.ErrorIs(t, err, ErrStep)
	assert.Contains(t, err.Error(), "step 0")
	assert.Equal(t, 0, rep.Steps)
	assert.GreaterOrEqual(t, rep.Launched, 20)
}

func TestSolveProviderErrorsBounded(t *testing.T) {
	m := &scripted{reply: func(SampleID, string) (string, string) { return "", "error" }}
	_, err := (&Solver{Config: Config{Vote: vote.Config{K: 2, MaxErrors: 3, Backoff: 1}}, Model: m}).Solve(context.Background(), &counter{target: 4})
	require.ErrorIs(t, err, vote.ErrTooManyErrors)
	assert.LessOrEqual(t, m.calls.Load(), int64(4+2), "errors are bounded, not retried forever")
}

func TestSolveNeedsModel(t *testing.T) {
	_, err := (&Solver{}).Solve(context.Background(), &counter{target: 1})
	assert.ErrorIs(t, err, ErrNoModel)
}

func TestSolveStepLimitAndCancel(t *testing.T) {
	m := &scripted{reply: noisy}
	_, err := (&Solver{Config: Config{MaxSteps: 5}, Model: m}).Solve(context.Background(), &counter{target: 50})
	assert.ErrorIs(t, err, ErrStepLimit)

	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	s := &Solver{Model: m, Progress: func(e Event) {
		steps++
		if steps == 4 {
			cancel()
		}
	}}
	rep, err := s.Solve(ctx, &counter{target: 50})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 4, rep.Steps)
}

func TestJournalResumeGivesSameRun(t *testing.T) {
	dir := t.TempDir()
	full := &counter{target: 40}
	whole, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}}).Solve(context.Background(), full)
	require.NoError(t, err)

	for _, stopAt := range []int{1, 17, 39} {
		path := filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", stopAt))
		j, err := journalfile.Create(path)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		s := &Solver{
			Config:  Config{Vote: vote.Config{K: 2, Parallel: 4}},
			Model:   &scripted{reply: noisy},
			Journal: j,
			Progress: func(e Event) {
				if e.Step+1 == stopAt {
					cancel()
				}
			},
		}
		_, err = s.Solve(ctx, &counter{target: 40})
		require.ErrorIs(t, err, context.Canceled)
		require.NoError(t, j.Close())
		cancel()

		j, err = journalfile.Open(path)
		require.NoError(t, err)
		resumed := &counter{target: 40}
		s = &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: 1}}, Model: &scripted{reply: noisy}, Journal: j}
		rep, err := s.Solve(context.Background(), resumed)
		require.NoError(t, err)
		require.NoError(t, j.Close())
		assert.Equal(t, stopAt, rep.Resumed)
		assert.Equal(t, full.n, resumed.n)
		assert.Equal(t, whole.Steps, rep.Steps)
		assert.Equal(t, whole.Valid, rep.Valid)
		assert.Equal(t, whole.Flagged, rep.Flagged)
		assert.Equal(t, whole.Flags, rep.Flags)
		assert.Equal(t, whole.SampleHistogram, rep.SampleHistogram)
		assert.Equal(t, whole.Usage.OutputTokens, rep.Usage.OutputTokens)

		// No step twice: the journal holds each step once.
		assert.Equal(t, 40, countSteps(t, path))
	}
}

func countSteps(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		var r struct {
			Step    *int `json:"step"`
			Pending bool `json:"pending"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		if r.Step != nil && !r.Pending {
			require.False(t, seen[*r.Step], "step %d twice", *r.Step)
			seen[*r.Step] = true
		}
	}
	return len(seen)
}

func TestJournalRefusesOtherRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{MaxSteps: 2}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), &counter{target: 10})
	require.ErrorIs(t, err, ErrStepLimit)
	require.NoError(t, j.Close())

	_, err = journalfile.Create(path)
	require.ErrorIs(t, err, journal.ErrExists, "an existing journal is never overwritten")

	for name, s := range map[string]*Solver{
		"other task":     {Model: &scripted{reply: noisy}},
		"other k":        {Config: Config{Vote: vote.Config{K: 5}}, Model: &scripted{reply: noisy}},
		"other settings": {Config: Config{Settings: map[string]string{"seed": "2"}}, Model: &scripted{reply: noisy}},
	} {
		j, err := journalfile.Open(path)
		require.NoError(t, err)
		task := &counter{target: 10}
		if name == "other task" {
			task.target = 11
		}
		s.Journal = j
		_, err = s.Solve(context.Background(), task)
		assert.ErrorIs(t, err, journal.ErrMismatch, name)
		require.NoError(t, j.Close())
	}
}

func TestJournalTornLastLineDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{MaxSteps: 5}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), &counter{target: 8})
	require.ErrorIs(t, err, ErrStepLimit)
	require.NoError(t, j.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(b, []byte(`{"step":5,"winner":{"val`)...), 0o644))

	j, err = journalfile.Open(path)
	require.NoError(t, err)
	task := &counter{target: 8}
	rep, err := (&Solver{Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, 5, rep.Resumed)
	assert.Equal(t, 8, task.n)
	assert.Equal(t, 8, countSteps(t, path))

	// A bad line in the middle is corruption, not a torn write.
	lines := strings.Split(string(mustRead(t, path)), "\n")
	lines[2] = "{not json"
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
	_, err = journalfile.Open(path)
	assert.ErrorIs(t, err, journal.ErrCorrupt)
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func TestJournalUsedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	s := &Solver{Model: &scripted{reply: noisy}, Journal: j}
	_, err = s.Solve(context.Background(), &counter{target: 3})
	require.NoError(t, err)
	_, err = s.Solve(context.Background(), &counter{target: 3})
	require.ErrorIs(t, err, journal.ErrUsed)
	require.NoError(t, j.Close())
	assert.Equal(t, 3, countSteps(t, path))
}

func TestOpenJournalNeverDamagesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"notes.txt":   "my precious notes, no newline",
		"config.json": "{\"a\": 1}\n{\"b\": 2}\n",
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		_, err := journalfile.Open(path)
		assert.ErrorIs(t, err, journal.ErrCorrupt, name)
		assert.Equal(t, content, string(mustRead(t, path)), name)
	}

	// A journal of another run, torn at the end, is refused untouched.
	path := filepath.Join(dir, "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), &counter{target: 3})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	torn := append(mustRead(t, path), []byte(`{"step":3,"win`)...)
	require.NoError(t, os.WriteFile(path, torn, 0o644))
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 4}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), &counter{target: 3})
	require.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), `k: 3 in the journal, 4 now`)
	require.NoError(t, j.Close())
	assert.Equal(t, torn, mustRead(t, path))
}

func TestResumeWithLargerBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2, MaxSamples: 2}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), &counter{target: 6})
	require.ErrorIs(t, err, vote.ErrUndecided, "sample 1 is always wrong: two samples cannot decide")
	require.NoError(t, j.Close())
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	task := &counter{target: 6}
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2, MaxSamples: 50}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, 6, task.n)
}

// panicky panics in the method named by where, at step 2.
type panicky struct {
	counter
	where string
}

func (p *panicky) Prompt(last *intent.Observation) []llms.MessageContent {
	if p.where == "Prompt" && p.n == 2 {
		panic("prompt boom")
	}
	return p.counter.Prompt(last)
}

func (p *panicky) Decode(r Reply) (intent.Output, error) {
	if p.where == "Decode" && p.n == 2 {
		panic("decode boom")
	}
	return p.counter.Decode(r)
}

func (p *panicky) Apply(w intent.Output, obs *intent.Observation) (bool, error) {
	if p.where == "Apply" && p.n == 2 {
		panic("apply boom")
	}
	return p.counter.Apply(w, obs)
}

func TestTaskPanicsFailTheStepAtOnce(t *testing.T) {
	for _, where := range []string{"Prompt", "Decode", "Apply"} {
		m := &scripted{reply: noisy}
		rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 2, MaxErrors: 50}}, Model: m}).Solve(context.Background(), &panicky{counter: counter{target: 5}, where: where})
		require.ErrorIs(t, err, ErrTaskPanic, where)
		require.ErrorIs(t, err, ErrStep, where)
		assert.Contains(t, err.Error(), strings.ToLower(where)+" boom")
		assert.Equal(t, 2, rep.Steps, where)
		// Steps 0 and 1 take 6 and 4 samples; step 2 at most its first
		// wave of 2 when Decode panics, 4 when Apply does. A Decode panic
		// must not be retried up to MaxErrors.
		assert.LessOrEqual(t, m.calls.Load(), int64(map[string]int{"Prompt": 10, "Decode": 12, "Apply": 14}[where]), where)
	}
}

func TestDecodeReplyMixesTextAndToolCalls(t *testing.T) {
	call := []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: "grep", Arguments: `{"pattern":"x"}`}}}
	out, err := DecodeReply(Reply{Text: "Let me search.", ToolCalls: call})
	require.NoError(t, err)
	assert.Equal(t, "grep", out.Intent.Tool)
	assert.Nil(t, out.Value, "chatter around a call is not an answer")

	out, err = DecodeReply(Reply{Text: `{"note": "searching"}`, ToolCalls: call})
	require.NoError(t, err)
	k1, err := intent.Key(out)
	require.NoError(t, err, "an object answer beside a call keys")
	k2, _ := intent.Key(intent.Output{Value: map[string]any{"note": "searching"}, Intent: out.Intent})
	assert.Equal(t, k2, k1)

	_, err = DecodeReply(Reply{Text: `[1, 2]`, ToolCalls: call})
	assert.ErrorIs(t, err, intent.ErrAmbiguous)
	_, err = DecodeReply(Reply{Text: `{"tool":"read_file","args":{"path":"a"}}`, ToolCalls: call})
	assert.ErrorIs(t, err, intent.ErrAmbiguous, "two different calls")
}
