package spec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// surfaceSpec is a task of steps steps whose answer names a city (text),
// a temperature (number, tolerance 0.5) and tags (a set); annotated=false
// is the same contract without x-mdap-match.
func surfaceSpec(t testing.TB, steps int, annotated bool) *Spec {
	t.Helper()
	ann := func(s string) string {
		if !annotated {
			return ""
		}
		return `, "x-mdap-match": ` + s
	}
	raw := fmt.Sprintf(`{"name": "surface", "system": "Name the capital.", "initial_state": {"n": 0}, "max_steps": %d,
	  "answer": {"type": "object", "required": ["state", "done"], "properties": {
	    "done": {"type": "boolean"},
	    "state": {"type": "object", "properties": {
	      "n": {"type": "integer"},
	      "city": {"type": "string"%s},
	      "temp": {"type": "number"%s},
	      "tags": {"type": "array", "items": {"type": "string"}%s}}}}}}`,
		steps+1, ann(`"text"`), ann(`{"kind": "number", "tolerance": 0.5}`), ann(`"set"`))
	s, err := Parse([]byte(raw))
	require.NoError(t, err)
	return s
}

// surfaceModel is a scripted model: at step n, sample i it answers right
// with probability p (city Paris, temp 21, tags eu and fr), else wrong
// (Lyon, 25, one tag), drawn from (seed, n, i) alone. With forms, a right
// answer comes in a surface form drawn from the same triple: "Paris",
// "paris.", " PARIS ", "Paris!"; 21 or 21.2; the tags in either order.
type surfaceModel struct {
	llms.Model
	steps int
	p     float64
	forms bool
}

func (m surfaceModel) GenerateContent(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	id, _ := maker.SampleIDFrom(ctx)
	rng := rand.New(rand.NewPCG(uint64(id.Step)*7919+3, uint64(id.Index)))
	right := rng.Float64() < m.p
	form := rng.IntN(4)
	city, temp, tags := "Paris", "21", `["eu", "fr"]`
	if !right {
		city, temp, tags = "Lyon", "25", `["eu"]`
	} else if m.forms {
		city = []string{"Paris", "paris.", " PARIS ", "Paris!"}[form]
		temp = []string{"21", "21.2", "21.0", "20.9"}[rng.IntN(4)]
		if rng.IntN(2) == 1 {
			tags = `["fr", "eu"]`
		}
	}
	reply := fmt.Sprintf(`{"state": {"n": %d, "city": %q, "temp": %s, "tags": %s}, "done": %v}`,
		id.Step+1, city, temp, tags, id.Step+1 >= m.steps)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply, StopReason: "stop"}}}, nil
}

func (m surfaceModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// stepLog is what a run decided per step: its key and votes.
type stepLog map[int]string

func (l stepLog) progress(e maker.Event) {
	l[e.Step] = fmt.Sprintf("key %s votes %v valid %d winner %v", e.Record.Key, e.Record.Votes, e.Record.Valid, e.Record.Winner.Value)
}

func solveSurface(t *testing.T, s *Spec, model llms.Model, cfg vote.Config, j *journal.Journal, maxSteps int) (maker.Report, stepLog, error) {
	t.Helper()
	log := stepLog{}
	solver := &maker.Solver{Config: maker.Config{Vote: cfg, MaxSteps: maxSteps}, Model: model, Journal: j, Progress: log.progress}
	rep, err := solver.Solve(context.Background(), New(s))
	return rep, log, err
}

// TestSurfaceFormsVoteTogether: a model whose right answers vary only in
// surface form decides every step, with the spec's annotations, within
// 1.2x the samples of a model that always answers in one form; with exact
// matching (the same contract without annotations) the same replies
// split and the run is far worse.
func TestSurfaceFormsVoteTogether(t *testing.T) {
	const steps, p = 30, 0.8
	cfg := vote.Config{K: 3, MaxSamples: 60}
	oneForm, _, err := solveSurface(t, surfaceSpec(t, steps, false), surfaceModel{steps: steps, p: p}, cfg, nil, 0)
	require.NoError(t, err)
	matched, _, err := solveSurface(t, surfaceSpec(t, steps, true), surfaceModel{steps: steps, p: p, forms: true}, cfg, nil, 0)
	require.NoError(t, err, "every step decided with the annotations")
	require.Equal(t, steps, matched.Steps)
	exact, _, exactErr := solveSurface(t, surfaceSpec(t, steps, false), surfaceModel{steps: steps, p: p, forms: true}, cfg, nil, 0)
	t.Logf("%d steps, p=%.2f, k=3: one form %d samples; varied forms, annotated %d samples; varied forms, exact: %d samples over %d decided steps (err: %v)",
		steps, p, oneForm.Launched, matched.Launched, exact.Launched, exact.Steps, exactErr)
	assert.LessOrEqual(t, float64(matched.Launched), 1.2*float64(oneForm.Launched), "within 1.2x the samples of one form")
	worse := exactErr != nil || float64(exact.Launched) > 2*float64(matched.Launched)
	assert.True(t, worse, "exact matching splits the forms: undecided or over twice the samples")
}

// TestSurfaceClassesDeterministic: the same classes (keys, votes) and
// winners at Parallel 1 and 4 (with speculation), and after a run
// stopped midway and resumed from its journal.
func TestSurfaceClassesDeterministic(t *testing.T) {
	const steps = 12
	s := surfaceSpec(t, steps, true)
	model := surfaceModel{steps: steps, p: 0.7, forms: true}
	_, want, err := solveSurface(t, s, model, vote.Config{K: 3}, nil, 0)
	require.NoError(t, err)
	require.Len(t, want, steps)
	for _, cfg := range []vote.Config{{K: 3, Parallel: 4}, {K: 3, Parallel: 4, Speculate: 2}} {
		_, got, err := solveSurface(t, s, model, cfg, nil, 0)
		require.NoError(t, err)
		assert.Equal(t, want, got, "Parallel %d Speculate %d", cfg.Parallel, cfg.Speculate)
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, first, err := solveSurface(t, s, model, vote.Config{K: 3, Parallel: 4}, j, 5)
	require.ErrorIs(t, err, maker.ErrStepLimit)
	require.NoError(t, j.Close())
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	_, resumed, err := solveSurface(t, s, model, vote.Config{K: 3, Parallel: 4}, j, 0)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	for step, line := range first {
		assert.Equal(t, want[step], line, "step %d before the stop", step)
	}
	for step := range steps {
		// Replayed steps carry the journal's winner (decoded JSON), so
		// compare keys and votes.
		assert.Equal(t, strings.SplitN(want[step], " winner", 2)[0], strings.SplitN(resumed[step], " winner", 2)[0], "step %d after the resume", step)
	}
}

// TestSurfaceClassesAgreeWithSolverClasses: the classes a race formed are
// those Solver.ClassesIn gives for the same replies in index order (what
// maker parse and the MCP vote tool show).
func TestSurfaceClassesAgreeWithSolverClasses(t *testing.T) {
	s := surfaceSpec(t, 3, true)
	task := New(s)
	model := surfaceModel{steps: 3, p: 0.7, forms: true}
	var outs []intent.Output
	for i := range 12 {
		ctx := maker.WithSampleID(context.Background(), maker.SampleID{Step: 0, Index: i})
		resp, err := model.GenerateContent(ctx, nil)
		require.NoError(t, err)
		out, err := task.Decode(maker.Reply{Text: resp.Choices[0].Content})
		require.NoError(t, err)
		outs = append(outs, out)
	}
	solver := &maker.Solver{}
	classes, err := solver.ClassesIn(context.Background(), task, outs)
	require.NoError(t, err)
	votes := map[uint64]int{}
	for _, c := range classes {
		votes[c]++
	}
	_, _, err = solveSurface(t, s, model, vote.Config{K: 12, MaxSamples: 12}, nil, 0)
	var ue *vote.UndecidedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, votes, ue.Tally.Votes)
	assert.Greater(t, len(votes), 1, "a wrong answer among the twelve")
}

// TestBadMatchAnnotationRefused: a spec whose answer contract has a bad
// x-mdap-match is refused at load, naming the field and what it takes.
func TestBadMatchAnnotationRefused(t *testing.T) {
	_, err := Parse([]byte(`{"system": "s", "answer": {"type": "object", "properties": {"state": {"properties": {"city": {"type": "string", "x-mdap-match": "fuzzy"}}}}}}`))
	require.ErrorIs(t, err, ErrSpec)
	require.ErrorIs(t, err, match.ErrMatcher)
	assert.Contains(t, err.Error(), `"answer"`)
	assert.Contains(t, err.Error(), "/properties/state/properties/city/x-mdap-match")
	assert.Contains(t, err.Error(), `give "exact", "text", "set", "code", {"kind": "number", "tolerance": 0.01}`)
	s, err := Parse([]byte(`{"system": "s", "answer": {"type": "object"}}`))
	require.NoError(t, err)
	assert.Nil(t, New(s).AnswerMatcher(), "no annotation: exact")
}

// TestAnnotatedSpecIsAnotherTask: an annotation changes the fingerprint
// (the whole spec is hashed) and the task version (spec/2: a journal
// written when annotations were ignored must not resume under matching);
// a spec without annotations keeps spec/1 and its fingerprint.
func TestAnnotatedSpecIsAnotherTask(t *testing.T) {
	plain, annotated := New(surfaceSpec(t, 3, false)), New(surfaceSpec(t, 3, true))
	assert.NotEqual(t, plain.Fingerprint(), annotated.Fingerprint())
	assert.Equal(t, "spec/1", plain.TaskVersion())
	assert.Equal(t, "spec/2", annotated.TaskVersion())
}

// BenchmarkSurfaceForms reports samples per step (samples/step) and
// undecided runs for a model answering in one form, in several surface
// forms under the spec's matchers, and in several forms with exact keys
// (a run that stops undecided counts the samples it spent over the steps
// it decided plus the one it failed).
func BenchmarkSurfaceForms(b *testing.B) {
	const steps, p = 30, 0.8
	for _, c := range []struct {
		name      string
		annotated bool
		forms     bool
	}{{"one-form", false, false}, {"forms-matched", true, true}, {"forms-exact", false, true}} {
		b.Run(c.name, func(b *testing.B) {
			s := surfaceSpec(b, steps, c.annotated)
			var samples, decided, failed int
			for range b.N {
				rep, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3, MaxSamples: 60}}, Model: surfaceModel{steps: steps, p: p, forms: c.forms}}).Solve(context.Background(), New(s))
				samples += rep.Launched
				decided += rep.Steps
				if err != nil {
					failed++
					decided++
				}
			}
			b.ReportMetric(float64(samples)/float64(decided), "samples/step")
			b.ReportMetric(float64(failed)/float64(b.N), "undecided/run")
		})
	}
}
