package maker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
)

// ErrPermanent is wrapped by a model's error that no retry can fix: an
// unknown model, a refused API key, a server that is not there. The
// solver's draw cancels the step's race at once with that error, so the
// step fails immediately with it instead of spending the error budget
// (vote.Config.MaxErrors) on calls that would fail the same way. A model
// wraps it (see maker/models); any other error is a transient provider
// error, retried with backoff within the budget.
var ErrPermanent = errors.New("permanent provider error")

// ErrNoAnswerSchema: Solver.Structured is set but the task is not a
// StructuredTask, or offers no schema.
var ErrNoAnswerSchema = errors.New("the task offers no answer schema")

// StructuredTask is implemented by a Task that can describe the answer its
// Decode accepts as a JSON Schema (an object schema, as OpenAI, vLLM,
// llama.cpp and Ollama accept for structured output). With
// Solver.Structured, the solver sends it with every call (see
// AnswerSchemaFrom), so a server that supports structured output
// constrains the reply to it. The schema only narrows what a model can
// say: Decode still checks every reply, and a reply that breaks the
// task's format is still red-flagged. AnswerSchema must return the same
// schema for the task's whole run; nil means none.
type StructuredTask interface {
	AnswerSchema() json.RawMessage
}

type answerSchemaKey struct{}

// WithAnswerSchema returns a context that carries the JSON Schema a reply
// must follow. The solver puts it in the context of every model call when
// Solver.Structured is set; a model that supports structured output reads
// it with AnswerSchemaFrom.
func WithAnswerSchema(ctx context.Context, schema json.RawMessage) context.Context {
	return context.WithValue(ctx, answerSchemaKey{}, schema)
}

// AnswerSchemaFrom returns the answer schema in ctx, if any. A model that
// honours it constrains its reply to the schema (OpenAI's response_format
// json_schema, Ollama's format); one that does not may ignore it, since
// the solver's red flags still apply.
func AnswerSchemaFrom(ctx context.Context) (json.RawMessage, bool) {
	s, ok := ctx.Value(answerSchemaKey{}).(json.RawMessage)
	return s, ok && len(s) > 0
}

// answerSchema returns the schema the solver sends with each call: nil
// without Structured, else the task's, or an error wrapping
// ErrNoAnswerSchema.
func (s *Solver) answerSchema(task Task) (json.RawMessage, error) {
	if !s.Structured {
		return nil, nil
	}
	st, ok := task.(StructuredTask)
	if !ok {
		return nil, ErrNoAnswerSchema
	}
	schema := st.AnswerSchema()
	if len(schema) == 0 {
		return nil, ErrNoAnswerSchema
	}
	if !json.Valid(schema) {
		return nil, errors.Join(ErrNoAnswerSchema, errors.New("the task's answer schema is not valid JSON"))
	}
	return schema, nil
}

// schemaDigest names a schema in the journal's settings.
func schemaDigest(schema json.RawMessage) string {
	sum := sha256.Sum256(schema)
	return hex.EncodeToString(sum[:8])
}
