package match_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// formsModel answers step n, sample i, from (n, i) alone: right with
// probability p, in one of the forms of the field's right answer, else a
// wrong one (which repeats, so that it can win a split vote).
type formsModel struct {
	llms.Model
	steps int
	p     float64
	field string
	right []string
	wrong string
	calls atomic.Int64
}

func (m *formsModel) GenerateContent(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls.Add(1)
	id, _ := maker.SampleIDFrom(ctx)
	rng := rand.New(rand.NewPCG(uint64(id.Step)*7919+11, uint64(id.Index)))
	v := m.wrong
	if rng.Float64() < m.p {
		v = m.right[rng.IntN(len(m.right))]
	}
	reply := fmt.Sprintf(`{"state": {"n": %d, %q: %q}, "done": %v}`, id.Step+1, m.field, v, id.Step+1 >= m.steps)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply, StopReason: "stop"}}}, nil
}

func (m *formsModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// withMatcher is a spec task whose matcher the library gives (a fake
// embedder or judge), everything else the spec's.
type withMatcher struct {
	*spec.Task
	m *match.Matcher
}

func (t withMatcher) AnswerMatcher() maker.AnswerMatcher { return t.m }

// formsSpec returns a maker of fresh tasks (a task is one run's state).
func formsSpec(t *testing.T, steps int, field, annotation string, opts match.Options) func() maker.Task {
	t.Helper()
	answer := fmt.Sprintf(`{"type": "object", "required": ["state", "done"], "properties": {
	    "done": {"type": "boolean"},
	    "state": {"type": "object", "properties": {"n": {"type": "integer"}, %q: {"type": "string", "x-mdap-match": %s}}}}}`, field, annotation)
	s, err := spec.Parse([]byte(fmt.Sprintf(`{"name": "forms", "system": "Answer.", "initial_state": {"n": 0}, "max_steps": %d, "answer": %s}`, steps+1, answer)))
	require.NoError(t, err)
	if opts.Embedder == nil && opts.Judge == nil {
		return func() maker.Task { return spec.New(s) }
	}
	m, err := match.NewWith([]byte(answer), opts)
	require.NoError(t, err)
	return func() maker.Task { return withMatcher{spec.New(s), m} }
}

type stepLog map[int]string

func solveForms(t *testing.T, task func() maker.Task, model llms.Model, cfg vote.Config, j *journal.Journal, maxSteps int) (maker.Report, stepLog, error) {
	t.Helper()
	log := stepLog{}
	solver := &maker.Solver{Config: maker.Config{Vote: cfg, MaxSteps: maxSteps}, Model: model, Journal: j,
		Progress: func(e maker.Event) {
			// Each counted sample's class, in index order: the journal
			// keeps them, so a resumed run replays them.
			var classes []string
			votes := map[string]int{}
			for _, x := range e.Record.Samples {
				if x.Cancelled {
					continue
				}
				c := "no vote"
				if x.Voted() {
					c = cmp.Or(x.Class, e.Record.Key) // "" is a vote for the winner
					votes[c]++
				}
				classes = append(classes, fmt.Sprintf("%d:%s", x.Index, c))
			}
			assert.Equal(t, e.Record.Votes, votes, "step %d (replayed %v): the samples' classes are the step's votes", e.Step, e.Replayed)
			log[e.Step] = fmt.Sprintf("key %s votes %v valid %d samples %v", e.Record.Key, e.Record.Votes, e.Record.Valid, classes)
		}}
	rep, err := solver.Solve(context.Background(), task())
	return rep, log, err
}

// paraphrases: a fake embedder puts these in one direction.
var paraphrases = []string{"The capital is Paris.", "Paris is the capital", "it's Paris, the capital", "Paris: the capital"}

// paraphraseEmbedder: a text mentioning Paris points one way (with a
// small tilt per text, so no two vectors are equal), anything else
// another.
type paraphraseEmbedder struct{}

func (paraphraseEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		tilt := float32(len(s)%5) * 0.01
		if strings.Contains(s, "Paris") {
			out[i] = []float32{1, tilt, 0}
		} else {
			out[i] = []float32{0, tilt, 1}
		}
	}
	return out, nil
}

// firstWordJudge: two verdicts mean the same when their first words do.
var firstWordJudge = match.JudgeFunc(func(_ context.Context, answer string, candidates []string) (int, error) {
	first := func(s string) string { return strings.Trim(strings.ToLower(strings.Fields(s + " x")[0]), ",.!") }
	for i, c := range candidates {
		if first(c) == first(answer) {
			return i, nil
		}
	}
	return -1, nil
})

// TestEveryMatcherDeterministicInARun: for code, embedding (a fake
// embedder) and judge (a fake judge), a run whose right answers come in
// several forms decides every step, with the same classes (keys, votes,
// and each sample's class, which sum to the votes) at Parallel 1, 4 and 4
// with speculation, and after a run stopped at step 5 and resumed from
// its journal (whose first 5 steps' samples are read back from it); the
// same run with exact keys does worse.
func TestEveryMatcherDeterministicInARun(t *testing.T) {
	const steps = 10
	cases := []struct {
		name, field, annotation string
		opts                    match.Options
		right                   []string
		wrong                   string
	}{
		{"code", "code", `"code"`, match.Options{},
			[]string{"func f(a int) int { return a * 2 }", "func f(n int) int {\n\treturn n * 2\n}", "func f(x int) int {\n\t// double\n\treturn x*2\n}"},
			"func f(a int) int { return a + 2 }"},
		{"embedding", "summary", `{"kind": "embedding", "threshold": 0.95, "model": "ollama:never-called", "url": "http://127.0.0.1:9"}`, match.Options{Embedder: paraphraseEmbedder{}},
			paraphrases, "Lyon is the capital"},
		{"judge", "verdict", `{"kind": "judge", "seed": 3, "model": "ollama:never-called", "url": "http://127.0.0.1:9"}`, match.Options{Judge: firstWordJudge},
			[]string{"Guilty as charged", "guilty, clearly", "Guilty!", "guilty on all counts"}, "Innocent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := formsSpec(t, steps, c.field, c.annotation, c.opts)
			model := &formsModel{steps: steps, p: 0.75, field: c.field, right: c.right, wrong: c.wrong}
			oneForm := &formsModel{steps: steps, p: 0.75, field: c.field, right: c.right[:1], wrong: c.wrong}
			base, _, err := solveForms(t, task, oneForm, vote.Config{K: 3}, nil, 0)
			require.NoError(t, err)
			rep, want, err := solveForms(t, task, model, vote.Config{K: 3}, nil, 0)
			require.NoError(t, err)
			require.Len(t, want, steps)
			assert.LessOrEqual(t, float64(rep.Launched), 1.2*float64(base.Launched), "within 1.2x the samples of one form")
			for _, cfg := range []vote.Config{{K: 3, Parallel: 4}, {K: 3, Parallel: 4, Speculate: 2}} {
				_, got, err := solveForms(t, task, model, cfg, nil, 0)
				require.NoError(t, err)
				assert.Equal(t, want, got, "Parallel %d Speculate %d", cfg.Parallel, cfg.Speculate)
			}
			path := filepath.Join(t.TempDir(), "run.jsonl")
			j, err := journalfile.Create(path)
			require.NoError(t, err)
			_, first, err := solveForms(t, task, model, vote.Config{K: 3, Parallel: 4}, j, 5)
			require.ErrorIs(t, err, maker.ErrStepLimit)
			require.NoError(t, j.Close())
			j, err = journalfile.Open(path)
			require.NoError(t, err)
			_, resumed, err := solveForms(t, task, model, vote.Config{K: 3, Parallel: 4}, j, 0)
			require.NoError(t, err)
			require.NoError(t, j.Close())
			for step, line := range first {
				assert.Equal(t, want[step], line, "step %d before the stop", step)
			}
			assert.Equal(t, want, resumed, "after the resume")

			exactTask := formsSpec(t, steps, c.field, `"exact"`, match.Options{})
			exact, _, exactErr := solveForms(t, exactTask, model, vote.Config{K: 3, MaxSamples: 40}, nil, 0)
			t.Logf("%s: one form %d samples, forms matched %d, forms exact %d over %d steps (%v)", c.name, base.Launched, rep.Launched, exact.Launched, exact.Steps, exactErr)
			assert.True(t, exactErr != nil || exact.Launched > rep.Launched, "exact keys split the forms")
		})
	}
}
