package models_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// ollamaReply is the body of a non-streamed /api/chat reply of Ollama
// v0.6.5; doneReason "" leaves the field out, as older servers do.
func ollamaReply(content, doneReason string, prompt, eval int) string {
	b, _ := json.Marshal(content)
	reason := ""
	if doneReason != "" {
		reason = fmt.Sprintf(`"done_reason":%q,`, doneReason)
	}
	return fmt.Sprintf(`{"model":"tiny","created_at":"2025-11-20T12:00:00Z","message":{"role":"assistant","content":%s},%s"done":true,"total_duration":1,"prompt_eval_count":%d,"eval_count":%d}`, b, reason, prompt, eval)
}

// story is what the tiny real model writes.
const story = "Once upon a time, there was a little girl named Lily. She liked"

func TestOllamaReadsStopReasonAndUsage(t *testing.T) {
	cleanEnv(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, ollamaReply(story, "length", 1326, 20))
	})
	resp, err := ask(context.Background(), open(t, "ollama:tiny", srv.URL))
	require.NoError(t, err)
	c := resp.Choices[0]
	assert.Equal(t, "length", c.StopReason, "done_reason, which langchaingo's client drops")
	assert.Equal(t, 20, c.GenerationInfo["CompletionTokens"], "the keys langchaingo's Ollama client sets")
	assert.Equal(t, 1326, c.GenerationInfo["PromptTokens"])

	// Through the solver: a reply cut at the cap is flagged "cut off",
	// with the server's token counts.
	rep, _, err := solve(t, open(t, "ollama:tiny", srv.URL))
	assert.ErrorIs(t, err, vote.ErrUndecided)
	assert.Equal(t, map[string]int{"cut off": 300}, rep.Flags)
	assert.Equal(t, 300*20, rep.Usage.OutputTokens)
	assert.Equal(t, 300*1326, rep.Usage.InputTokens)
}

func TestOllamaWithoutDoneReasonFlagsAReplyOfExactlyTheCap(t *testing.T) {
	cleanEnv(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Options struct {
				NumPredict int `json:"num_predict"`
			} `json:"options"`
		}
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		writeJSON(w, 200, ollamaReply(story, "", 10, req.Options.NumPredict))
	})
	rep, _, err := solve(t, open(t, "ollama:tiny", srv.URL))
	assert.ErrorIs(t, err, vote.ErrUndecided)
	assert.Equal(t, map[string]int{"cut off": 300}, rep.Flags, "usage is read, not estimated, so a reply of exactly the cap is cut off")
}

// A reply stream cut short is a provider error, never an "empty" reply.
func TestOllamaCutStreamIsAnError(t *testing.T) {
	cleanEnv(t)
	full := ollamaReply(story, "stop", 10, 15)
	for name, h := range map[string]http.HandlerFunc{
		"server dies mid-reply": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, full[:40])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection is cut
		},
		"stream ends without its done line": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			_, _ = io.WriteString(w, `{"model":"tiny","message":{"role":"assistant","content":"Once"},"done":false}`+"\n")
		},
		"empty body": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, h)
			m := open(t, "ollama:tiny", srv.URL)
			_, err := ask(context.Background(), m)
			assert.ErrorIs(t, err, models.ErrIncomplete)
			assert.NotErrorIs(t, err, maker.ErrPermanent, "transient: retried within the budget")
			assert.Contains(t, err.Error(), "reply cut short: ollama:tiny at "+srv.URL+": the reply stream ended after")
			assert.Contains(t, err.Error(), `without its final "done" line`)

			rep, took, err := solve(t, m)
			assert.ErrorIs(t, err, vote.ErrTooManyErrors)
			assert.ErrorIs(t, err, models.ErrIncomplete)
			assert.Equal(t, 11, rep.Errors, "counted against the error budget")
			assert.Zero(t, rep.Flagged, "never an empty red flag")
			assert.Empty(t, rep.Flags)
			assert.GreaterOrEqual(t, took, 20*time.Millisecond, "with backoff between the failed calls")
		})
	}
}

func TestOllamaStreamStalledPastTheTimeout(t *testing.T) {
	cleanEnv(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = io.WriteString(w, `{"model":"tiny","message":{"role":"assistant","content":"Once"},"done":false}`+"\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	m, err := models.Open("ollama:tiny", models.Options{BaseURL: srv.URL, Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	_, err = ask(context.Background(), m)
	assert.ErrorIs(t, err, models.ErrIncomplete)
	assert.Contains(t, err.Error(), "the call reached --timeout 200ms")
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestOllamaServerErrorLine(t *testing.T) {
	cleanEnv(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 500, `{"error":"llama runner process has terminated: signal: killed"}`)
	})
	_, err := ask(context.Background(), open(t, "ollama:tiny", srv.URL))
	require.Error(t, err)
	assert.NotErrorIs(t, err, maker.ErrPermanent)
	assert.Contains(t, err.Error(), "ollama:tiny at "+srv.URL+": HTTP 500: llama runner process has terminated: signal: killed")
}

// recorder is a server that keeps the chat requests' bodies.
type recorder struct {
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
}

func (rc *recorder) record(t *testing.T, r *http.Request) {
	var body map[string]json.RawMessage
	assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, body)
	rc.mu.Unlock()
}

func TestStructuredOutputReachesTheServer(t *testing.T) {
	cleanEnv(t)
	task, err := hanoi.New(2)
	require.NoError(t, err)
	schema := task.AnswerSchema()
	answer := `{"move": [1, 0, 1], "next_state": [[2], [1], []]}`
	var rc recorder
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		rc.record(t, r)
		if strings.HasSuffix(r.URL.Path, "/api/chat") {
			writeJSON(w, 200, ollamaReply(answer, "stop", 10, 25))
			return
		}
		content, _ := json.Marshal(answer)
		writeJSON(w, 200, `{"id":"x","object":"chat.completion","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":`+string(content)+`},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":25,"total_tokens":35}}`)
	})
	for _, c := range []struct{ spec, base string }{{"ollama:tiny", srv.URL}, {"openai:tiny", srv.URL + "/v1"}} {
		rc.bodies = nil
		s := &maker.Solver{Config: maker.Config{Structured: true, Vote: vote.Config{K: 1}}, Model: open(t, c.spec, c.base)}
		task, err := hanoi.New(2)
		require.NoError(t, err)
		rep, err := s.Solve(context.Background(), task)
		require.NoError(t, err, c.spec)
		assert.Equal(t, 3, rep.Valid, c.spec)
		// docs/models.md:106: "every call carries it", not only the first.
		require.Len(t, rc.bodies, 3, c.spec)
		for i, body := range rc.bodies {
			if c.spec == "ollama:tiny" {
				assert.JSONEq(t, string(schema), string(body["format"]), "call %d: Ollama gets the schema object in format, not a string", i)
				continue
			}
			var rf struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Name   string          `json:"name"`
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			}
			require.NoError(t, json.Unmarshal(body["response_format"], &rf))
			assert.Equal(t, "json_schema", rf.Type)
			assert.Equal(t, "answer", rf.JSONSchema.Name)
			var got map[string]any
			require.NoError(t, json.Unmarshal(rf.JSONSchema.Schema, &got))
			props := got["properties"].(map[string]any)
			assert.Len(t, props["move"].(map[string]any)["enum"], 12, "the 12 moves of 2 disks")
			assert.Len(t, props["next_state"].(map[string]any)["enum"], 9, "the 9 states of 2 disks")
		}
	}

	// Without Structured, nothing is constrained.
	rc.bodies = nil
	task, err = hanoi.New(2)
	require.NoError(t, err)
	_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 1}}, Model: open(t, "ollama:tiny", srv.URL)}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.JSONEq(t, `""`, string(rc.bodies[0]["format"]))
}

func TestSchemaLangchaingoCannotCarryFallsBackToJSONMode(t *testing.T) {
	cleanEnv(t)
	var rc recorder
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		rc.record(t, r)
		writeJSON(w, 200, `{"id":"x","object":"chat.completion","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	schema := json.RawMessage(`{"anyOf":[{"type":"object"},{"type":"string"}]}`)
	ctx := maker.WithAnswerSchema(context.Background(), schema)
	_, err := open(t, "openai:tiny", srv.URL+"/v1").GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.WithJSONMode())
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"json_object"}`, string(rc.bodies[0]["response_format"]))
}
