package maker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestPermanentErrorFailsTheStepAtOnce(t *testing.T) {
	var calls atomic.Int32
	cause := fmt.Errorf("%w: openai:nosuch at http://127.0.0.1:1/v1: unknown model", ErrPermanent)
	m := ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		calls.Add(1)
		return nil, cause
	})
	s := &Solver{Config: Config{Vote: vote.Config{K: 3, MaxErrors: 10, Backoff: time.Second}}, Model: m}
	start := time.Now()
	rep, err := s.Solve(context.Background(), &counter{target: 3})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrPermanent)
	assert.ErrorIs(t, err, ErrStep)
	assert.Contains(t, err.Error(), "step 0: permanent provider error: openai:nosuch at http://127.0.0.1:1/v1: unknown model")
	assert.LessOrEqual(t, calls.Load(), int32(3), "no call after the first permanent error but those already in flight")
	assert.Less(t, time.Since(start), time.Second, "no backoff, no retry")
	assert.LessOrEqual(t, rep.Errors+rep.Cancelled, 3)
}

func TestTransientErrorsStillSpendTheBudget(t *testing.T) {
	var calls atomic.Int32
	m := ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		calls.Add(1)
		return nil, errors.New("HTTP 503")
	})
	s := &Solver{Config: Config{Vote: vote.Config{K: 1, MaxErrors: 3, Backoff: time.Millisecond}}, Model: m}
	_, err := s.Solve(context.Background(), &counter{target: 3})
	assert.ErrorIs(t, err, vote.ErrTooManyErrors)
	assert.NotErrorIs(t, err, ErrPermanent)
	assert.Equal(t, int32(4), calls.Load())
}

// structuredCounter is a counter that offers its answer schema.
type structuredCounter struct{ counter }

const counterSchema = `{"type":"object","properties":{"next":{"type":"integer"}},"required":["next"],"additionalProperties":false}`

func (structuredCounter) AnswerSchema() json.RawMessage { return json.RawMessage(counterSchema) }

func TestStructuredSendsTheSchemaWithEveryCall(t *testing.T) {
	var mu sync.Mutex
	var schemas []string
	var jsonMode []bool
	m := ModelFunc(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		var o llms.CallOptions
		for _, opt := range opts {
			opt(&o)
		}
		s, _ := AnswerSchemaFrom(ctx)
		mu.Lock()
		schemas, jsonMode = append(schemas, string(s)), append(jsonMode, o.JSONMode)
		mu.Unlock()
		n := current(msgs[0].Parts[0].(llms.TextContent).Text)
		return TextResponse(fmt.Sprintf(`{"next": %d}`, n+1), "stop"), nil
	})
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}, Structured: true}, Model: m, Journal: j}
	task := &structuredCounter{counter{target: 2}}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, 2, rep.Steps)
	require.Len(t, schemas, 4)
	for i := range schemas {
		assert.JSONEq(t, counterSchema, schemas[i])
		assert.True(t, jsonMode[i], "JSON mode, for a model that knows no schema")
	}
	assert.Contains(t, string(mustRead(t, path)), `"answer_schema":"`, "the journal records the schema")

	// Off, nothing is sent.
	schemas = nil
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: m}).Solve(context.Background(), &structuredCounter{counter{target: 1}})
	require.NoError(t, err)
	assert.Equal(t, []string{"", ""}, schemas)

	// A resume without --structured is another run.
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: m, Journal: j}).Solve(context.Background(), &structuredCounter{counter{target: 2}})
	assert.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), "answer_schema")
	require.NoError(t, j.Close())
}

func TestStructuredNeedsASchema(t *testing.T) {
	m := ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		t.Error("no call without a schema")
		return nil, errors.New("unreachable")
	})
	_, err := (&Solver{Config: Config{Structured: true}, Model: m}).Solve(context.Background(), &counter{target: 1})
	assert.ErrorIs(t, err, ErrNoAnswerSchema)
}

// A step whose Apply fails still spent its samples: the report counts
// them (found against a real server, whose token counts were higher).
func TestFailedApplyStillCountsItsSamples(t *testing.T) {
	m := ModelFunc(func(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		resp := TextResponse(`{"next": "x"}`, "stop")
		resp.Choices[0].GenerationInfo = map[string]any{"PromptTokens": 10, "CompletionTokens": 3}
		return resp, nil
	})
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: m}).Solve(context.Background(), failingApply{})
	assert.ErrorIs(t, err, ErrStep)
	assert.Equal(t, 2, rep.Launched)
	assert.Equal(t, 2, rep.Valid)
	assert.Equal(t, 20, rep.Usage.InputTokens)
	assert.Equal(t, 6, rep.Usage.OutputTokens)
	require.Len(t, rep.Models, 1)
	assert.Equal(t, 2, rep.Models[0].Launched)
	assert.Zero(t, rep.Steps)
}

// failingApply is a task whose Apply always fails.
type failingApply struct{}

func (failingApply) Fingerprint() string { return "failing" }
func (failingApply) Prompt(*intent.Observation) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "go")}
}
func (failingApply) Decode(r Reply) (intent.Output, error) { return DecodeReply(r) }
func (failingApply) Apply(intent.Output, *intent.Observation) (bool, error) {
	return false, errors.New("apply refused")
}
