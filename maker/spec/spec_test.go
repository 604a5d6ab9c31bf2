package spec

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const repo = "../../testdata/spec/repo"

// recorder keeps the prompt of every step's first sample.
type recorder struct {
	llms.Model
	mu      sync.Mutex
	prompts map[int]string
}

func (r *recorder) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if id, ok := maker.SampleIDFrom(ctx); ok && id.Index == 0 {
		var b strings.Builder
		for _, m := range msgs {
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					b.WriteString(t.Text)
				}
			}
		}
		r.mu.Lock()
		r.prompts[id.Step] = b.String()
		r.mu.Unlock()
	}
	return r.Model.GenerateContent(ctx, msgs, opts...)
}

func simFor(t *testing.T, s *Spec, seed uint64, p float64) *recorder {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate, cfg.WrongAnswers = seed, p, 0.05, 3
	m, err := sim.New(Oracle{Spec: s}, cfg)
	require.NoError(t, err)
	return &recorder{Model: m, prompts: map[int]string{}}
}

func TestFindVersionThroughRealTools(t *testing.T) {
	s, err := Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	for seed := uint64(1); seed <= 5; seed++ {
		ex, err := fstools.New(repo)
		require.NoError(t, err)
		model := simFor(t, s, seed, 0.8)
		task := New(s)
		rep, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: model, Executor: ex}).Solve(context.Background(), task)
		require.NoError(t, err, "seed %d", seed)
		assert.True(t, task.Done())
		assert.JSONEq(t, `{"version":"1.4.2","file":"src/version.go"}`, string(task.State()))
		assert.Equal(t, 3, rep.Steps)
		assert.Equal(t, 2, rep.ToolCalls)
		assert.Zero(t, rep.Denied)
		// The grep result reached step 1's prompt, the file's text step 2's.
		assert.Contains(t, model.prompts[1], `src/version.go:4: const Version = "1.4.2"`)
		assert.Contains(t, model.prompts[2], "// Version is the release this tree builds.")
	}
}

// blind is a spec task whose prompts never show the last tool result.
type blind struct{ *Task }

func (b blind) Prompt(*intent.Observation) []llms.MessageContent { return b.Task.Prompt(nil) }

func TestObservationMustReachThePrompt(t *testing.T) {
	s, err := Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	ex, err := fstools.New(repo)
	require.NoError(t, err)
	task := New(s)
	_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: simFor(t, s, 1, 0.9), Executor: ex}).Solve(context.Background(), blind{task})
	// Without the grep result the scripted model cannot know which file to
	// read: it reads another and ends in a wrong state.
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, json.Unmarshal(task.State(), &got))
	assert.NotEqual(t, map[string]string{"file": "src/version.go", "version": "1.4.2"}, got)
}

func TestWriteDeniedUnderReadOnlyPolicy(t *testing.T) {
	s, err := Load("../../testdata/spec/write-denied.json")
	require.NoError(t, err)
	root := t.TempDir()
	ex, err := fstools.New(root) // default policy: read-only
	require.NoError(t, err)
	model := simFor(t, s, 7, 0.9)
	task := New(s)
	rep, err := (&maker.Solver{Model: model, Executor: ex}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.ToolCalls)
	assert.Equal(t, 1, rep.Denied)
	assert.Contains(t, model.prompts[1], "denied")
	assert.Contains(t, model.prompts[1], "file_write")
	assert.JSONEq(t, `{"wrote":false}`, string(task.State()))
	_, err = os.Stat(filepath.Join(root, "note.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing may be written under the read-only policy")

	// With file_write allowed, the same task writes the note.
	tax := categories.Builtin()
	pol, err := selection.Parse(tax, "read_only,file_write")
	require.NoError(t, err)
	ex, err = fstools.New(root, executor.WithPolicy(pol), executor.WithTaxonomy(tax))
	require.NoError(t, err)
	note, err := Load("../../testdata/spec/write-note.json")
	require.NoError(t, err)
	task = New(note)
	rep, err = (&maker.Solver{Model: simFor(t, note, 7, 0.9), Executor: ex}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Zero(t, rep.Denied)
	assert.JSONEq(t, `{"wrote":true}`, string(task.State()), "the script says what happened")
	b, err := os.ReadFile(filepath.Join(root, "note.txt"))
	require.NoError(t, err)
	assert.Equal(t, "written by a microagent", string(b))
}

func TestParseErrors(t *testing.T) {
	for name, in := range map[string]string{
		"not json":                   `{`,
		"unknown field":              `{"system":"x","answer":{},"colour":1}`,
		"no system":                  `{"answer":{}}`,
		"no answer":                  `{"system":"x"}`,
		"bad schema":                 `{"system":"x","answer":{"type":"thing"}}`,
		"negative steps":             `{"system":"x","answer":{},"max_steps":-1}`,
		"bad script":                 `{"system":"x","answer":{},"script":[1]}`,
		"trailing data":              `{"system":"x","answer":{}} garbage`,
		"two objects":                `{"system":"x","answer":{}}{"system":"y"}`,
		"external ref":               `{"system":"x","answer":{"$ref":"file:///etc/schema.json"}}`,
		"absolute root":              `{"system":"x","answer":{},"root":"/etc"}`,
		"root leaves":                `{"system":"x","answer":{},"root":"repo/../.."}`,
		"script breaks the contract": `{"system":"x","answer":{"type":"object","required":["done"]},"script":[{"state":1}]}`,
		"observed script breaks it":  `{"system":"x","answer":{"type":"object","required":["done"]},"script":[{"reply":{"state":1},"requires_observation":"x"}]}`,
	} {
		_, err := Parse([]byte(in))
		assert.ErrorIs(t, err, ErrSpec, name)
	}
	_, err := Load("no/such/file.json")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestDecodeChecksContract(t *testing.T) {
	s, err := Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	task := New(s)
	for _, bad := range []string{
		`{"state":{"version":"1"},"done":true}`,              // file missing
		`{"state":{"version":1,"file":"a"},"done":true}`,     // wrong type
		`{"state":{"version":"1","file":"a"},"done":"true"}`, // done not a boolean
		`{"state":{"version":"1","file":"a"},"done":true,"extra":0}`,
	} {
		_, err := task.Decode(maker.Reply{Text: bad})
		assert.ErrorIs(t, err, maker.ErrFormat, bad)
	}
	out, err := task.Decode(maker.Reply{Text: `{"tool_intent":{"tool":"grep","args":{"pattern":"x"}}}`})
	require.NoError(t, err)
	assert.Equal(t, "grep", out.Intent.Tool)
}

func TestStepLimit(t *testing.T) {
	s, err := Parse([]byte(`{"system":"x","answer":{"type":"object"},"max_steps":2}`))
	require.NoError(t, err)
	task := New(s)
	done, err := task.Apply(intent.Output{Value: map[string]any{"state": "a"}}, nil)
	require.NoError(t, err)
	assert.False(t, done)
	_, err = task.Apply(intent.Output{Value: map[string]any{"state": "b"}}, nil)
	assert.ErrorIs(t, err, maker.ErrStepLimit, "one sentinel for every step limit")
	assert.JSONEq(t, `"b"`, string(task.State()))
}

func TestAnswerSchema(t *testing.T) {
	plain, err := Parse([]byte(`{"system": "count", "answer": {"type": "object", "properties": {"state": {"type": "integer"}, "done": {"type": "boolean"}}, "required": ["state", "done"]}}`))
	require.NoError(t, err)
	var st maker.StructuredTask = New(plain)
	assert.JSONEq(t, string(plain.Answer), string(st.AnswerSchema()), "no tools: the answer contract itself")

	withTools, err := Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	var got struct {
		AnyOf []json.RawMessage `json:"anyOf"`
	}
	require.NoError(t, json.Unmarshal(New(withTools).AnswerSchema(), &got))
	require.Len(t, got.AnyOf, 2, "the contract or a tool intent")
	assert.JSONEq(t, string(withTools.Answer), string(got.AnyOf[0]))
	assert.Contains(t, string(got.AnyOf[1]), `"enum":["read_file","grep"]`)
}

func TestSpecSizeLimit(t *testing.T) {
	big := `{"system":"x","answer":{},"name":"` + strings.Repeat("a", MaxSpecBytes) + `"}`
	_, err := Parse([]byte(big))
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), "over")
	path := filepath.Join(t.TempDir(), "big.json")
	require.NoError(t, os.WriteFile(path, []byte(big), 0o644))
	_, err = Load(path)
	assert.ErrorIs(t, err, ErrSpec)
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"find-version.json", "write-denied.json"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/spec", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"system":"x","answer":{"type":"object"},"script":[{"reply":{"a":1},"requires_observation":"x"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 8<<10 {
			t.Skip()
		}
		s, err := Parse(b)
		if err != nil {
			require.ErrorIs(t, err, ErrSpec)
			return
		}
		// A spec that parses makes a task whose first prompt renders and
		// whose oracle answers or refuses, without panicking.
		task := New(s)
		msgs := task.Prompt(nil)
		require.NotEmpty(t, msgs)
		_, _ = Oracle{Spec: s}.Correct(sim.Query{Prompt: sim.PromptText(msgs)})
	})
}
