package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/replyfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// anyAnswer is a one-step task that takes whatever a reply decodes to.
type anyAnswer struct{}

func (anyAnswer) Fingerprint() string { return "any-answer" }
func (anyAnswer) Prompt(*intent.Observation) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "answer")}
}
func (anyAnswer) Decode(r maker.Reply) (intent.Output, error)            { return maker.DecodeReply(r) }
func (anyAnswer) Apply(intent.Output, *intent.Observation) (bool, error) { return true, nil }

// replayModel answers sample i with replies[i mod len].
type replayModel struct{ replies []maker.Reply }

func (m replayModel) GenerateContent(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	id, _ := maker.SampleIDFrom(ctx)
	r := m.replies[id.Index%len(m.replies)]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: r.Text, ToolCalls: r.ToolCalls, StopReason: r.StopReason,
		GenerationInfo: map[string]any{"PromptTokens": 10, "CompletionTokens": r.OutputTokens}}}}, nil
}

func (m replayModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// TestParseAgreesWithARunOverTheFuzzCorpus: over the seed corpus of
// intent's parser (testdata/responses) and the grep spellings,
// maker parse gives each reply the red flag and the key that a run's
// race gives the same reply as a sample: so two replies have one key in
// parse exactly when the run votes them together.
func TestParseAgreesWithARunOverTheFuzzCorpus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "responses")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	var replies []maker.Reply
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		r, err := replyfile.Read(e.Name(), b)
		require.NoError(t, err, e.Name())
		names, replies = append(names, e.Name()), append(replies, r)
	}
	for i, text := range []string{
		`{"tool_intent":{"tool":"grep","args":{"pattern":"Version","paths":["src"]}}}`,
		`{"tool_intent":{"tool":"grep","args":{"pattern":"Version","paths":"[\"src\"]"}}}`,
		`{"tool_intent":{"tool":"grep","args":{"pattern":"Version","paths":"src"}}}`,
		`{"tool_intent":{"tool":"read_file","args":{"path":"a.txt","max_bytes":"100"}}}`,
		`{"tool_intent":{"tool":"read_file","args":{"path":"a.txt","max_bytes":100}}}`,
		`{"tool_intent":{"tool":"read_file","args":{"path":"a.txt","nonsense":true}}}`,
		`{"a":1,"a":2}`, `{"a":1.0}`, `{"a":1}`, "", "{}", "null",
	} {
		r, err := replyfile.Read("extra.txt", []byte(text))
		require.NoError(t, err)
		names, replies = append(names, "extra "+strconv.Itoa(i)), append(replies, r)
	}

	for _, tools := range []bool{false, true} {
		t.Run(map[bool]string{false: "no-tools", true: "spec-tools"}[tools], func(t *testing.T) {
			parseAgreesWithARun(t, names, replies, tools)
		})
	}
}

func parseAgreesWithARun(t *testing.T, names []string, replies []maker.Reply, tools bool) {
	// parse's verdicts, in order.
	solver, err := replyfile.NewSolver(maker.DefaultMaxTokens, tools)
	require.NoError(t, err)
	defer closeSolver(solver)
	lines, err := replyfile.JudgeWith(context.Background(), solver, nil, names, replies)
	require.NoError(t, err)

	// A run's race over the same replies, one sample each in order.
	runSolver, err := replyfile.NewSolver(maker.DefaultMaxTokens, tools)
	require.NoError(t, err)
	defer closeSolver(runSolver)
	n := len(replies)
	var mu sync.Mutex
	events := make([]*maker.SampleEvent, n)
	runSolver.Vote = vote.Config{K: n + 1, MaxSamples: n + 1, Parallel: 1}
	runSolver.Model = replayModel{replies: replies}
	runSolver.OnSample = func(e maker.SampleEvent) {
		if e.Index < n {
			mu.Lock()
			events[e.Index] = &e
			mu.Unlock()
		}
	}
	_, err = runSolver.Solve(context.Background(), anyAnswer{})
	require.ErrorIs(t, err, vote.ErrUndecided, "no reply is n+1 ahead: every reply is drawn")

	for i, l := range lines {
		e := events[i]
		require.NotNil(t, e, names[i])
		if e.Flag != nil {
			assert.Equal(t, e.Flag.Error(), l.Flag, "%s: the run flags it", names[i])
			continue
		}
		assert.Empty(t, l.Flag, "%s: the run lets it vote (%s)", names[i], l.Reason)
		assert.Equal(t, strconv.FormatUint(e.Key, 16), l.Key, "%s: parse's key is the run's", names[i])
	}
	keyOf := func(name string) string { return lines[slices.Index(names, name)].Key }
	assert.Equal(t, keyOf("extra 7"), keyOf("extra 8"))
	if tools {
		assert.Equal(t, keyOf("extra 0"), keyOf("extra 1"), `"paths": "[\"src\"]" votes with ["src"]`)
		assert.NotEqual(t, keyOf("extra 0"), keyOf("extra 2"))
	}
}

// TestBinaryParseHealsAsASpecRunDoes: the example. A spec run
// votes grep's "paths": "[\"src\"]" with ["src"] (the executor heals the
// string into the list), and maker parse --spec shows them as one answer.
func TestBinaryParseHealsAsASpecRunDoes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "find.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"name": "find", "system": "Find the version.", "tools": ["grep"],
	  "answer": {"type": "object", "properties": {"state": {"type": "object"}}}}`), 0o600))
	var files []string
	for i, paths := range []string{`["src"]`, `"[\"src\"]"`} {
		p := filepath.Join(dir, strconv.Itoa(i)+".txt")
		require.NoError(t, os.WriteFile(p, []byte(`{"tool_intent":{"tool":"grep","args":{"pattern":"Version","paths":`+paths+`}}}`), 0o600))
		files = append(files, p)
	}
	code, out, stderr := cli(t, append([]string{"parse", "--spec", spec}, files...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "2 replies: 1 distinct answer, 0 red-flagged")
}

// closeSolver closes the executor of replyfile.NewSolver's solver, if any.
func closeSolver(s *maker.Solver) {
	if s.Executor != nil {
		s.Executor.Close()
	}
}
