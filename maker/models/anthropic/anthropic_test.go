package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// anthropicBlock is one content block of a Messages API request.
type anthropicBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// anthropicRequest is what the test server reads of a Messages API
// request.
type anthropicRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string           `json:"role"`
		Content []anthropicBlock `json:"content"`
	} `json:"messages"`
}

// anthropicServer speaks Anthropic's Messages API on loopback with its
// prompt cache: a block marked cache_control is written to the cache the
// first time it is seen (cache_creation_input_tokens) and read from it
// afterwards (cache_read_input_tokens); the rest of the prompt is
// input_tokens. It answers Hanoi step prompts correctly and bills four
// bytes a token. It keeps every request and the totals it billed.
type anthropicServer struct {
	mu       sync.Mutex
	cached   map[string]bool
	requests []anthropicRequest
	billed   vote.Usage // InputTokens here is input_tokens alone
}

func (a *anthropicServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != "test-key" || r.Header.Get("anthropic-version") == "" {
		writeJSON(w, http.StatusNotFound, `{"type":"error","error":{"type":"not_found_error","message":"no such route"}}`)
		return
	}
	var req anthropicRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`)
		return
	}
	var system string
	_ = json.Unmarshal(req.System, &system)
	var text strings.Builder
	text.WriteString(system)
	plain, read, write := maker.EstimateTokens(system), 0, 0
	a.mu.Lock()
	for _, m := range req.Messages {
		for _, b := range m.Content {
			text.WriteString(b.Text)
			n := maker.EstimateTokens(b.Text)
			switch {
			case len(b.CacheControl) == 0:
				plain += n
			case a.cached[b.Text]:
				read += n
			default:
				a.cached[b.Text] = true
				write += n
			}
		}
	}
	answer, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: text.String()})
	if err != nil {
		a.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error()))
		return
	}
	out := maker.EstimateTokens(answer)
	a.requests = append(a.requests, req)
	id := len(a.requests)
	a.billed.Add(vote.Usage{InputTokens: plain, OutputTokens: out, CachedInputTokens: read, CacheWriteTokens: write, Requests: 1})
	a.mu.Unlock()
	body, _ := json.Marshal(map[string]any{
		"id": fmt.Sprintf("msg_%d", id), "type": "message", "role": "assistant", "model": req.Model,
		"content":     []map[string]any{{"type": "text", "text": answer}},
		"stop_reason": "end_turn",
		"usage": map[string]any{
			"input_tokens": plain, "output_tokens": out,
			"cache_creation_input_tokens": write, "cache_read_input_tokens": read,
		},
	})
	writeJSON(w, http.StatusOK, string(body))
}

// longRules is Hanoi with a system prompt long enough for Anthropic's
// cache: the task's rules after a static manual of about 1,600 tokens.
type longRules struct{ *hanoi.Task }

var manual = strings.Repeat("A move takes the top disk of one peg to another peg; no disk may rest on a smaller one. ", 72)

func (l longRules) Prompt(last *intent.Observation) []llms.MessageContent {
	msgs := l.Task.Prompt(last)
	msgs[0] = llms.TextParts(llms.ChatMessageTypeSystem, manual+hanoi.SystemPrompt)
	return msgs
}

// Against a loopback server speaking Anthropic's Messages API: the rules
// every step shares are the first part of the user message, marked
// cache_control ephemeral, and nothing else is marked; the step's data
// follows unmarked; the cache reads and writes the server bills are read
// into the report's usage and priced at the cache prices (reads at the
// discount, writes at the premium), which for claude-sonnet-4-5 are
// Anthropic's published ones in the built-in table.
func TestAnthropicCacheMarkers(t *testing.T) {
	srv := &anthropicServer{cached: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	builtin, ok := models.BuiltinPrice("anthropic", "claude-sonnet-4-5-20250929")
	require.True(t, ok)
	assert.Equal(t, maker.Price{InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75}, builtin,
		"Anthropic's published Sonnet 4.5 prices: cache reads 0.1x input, 5-minute writes 1.25x")
	// At its own server the built-in price applies; here the spec
	// gives the same one, since a loopback URL is not Anthropic's.
	m, err := models.Open("anthropic:claude-sonnet-4-5=3/15/0.3/3.75", models.Options{BaseURL: ts.URL + "/v1", APIKey: "test-key", Timeout: 5 * time.Second})
	require.NoError(t, err)

	task, err := hanoi.New(3)
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{MaxTokens: 100, Vote: vote.Config{K: 2, MaxErrors: 3}}, Model: m}
	rep, err := s.Solve(context.Background(), longRules{task})
	require.NoError(t, err)
	require.True(t, rep.Done)
	require.Equal(t, 7, rep.Steps)

	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.NotEmpty(t, srv.requests)
	static := manual + hanoi.SystemPrompt
	for i, req := range srv.requests {
		assert.Zero(t, len(strings.Trim(string(req.System), `"`)), "request %d: the rules moved out of the system field", i)
		require.Len(t, req.Messages, 1, "request %d", i)
		blocks := req.Messages[0].Content
		require.Len(t, blocks, 2, "request %d: the static part, then the step's part", i)
		assert.True(t, static == blocks[0].Text, "request %d: the static part is first, byte for byte", i)
		assert.JSONEq(t, `{"type":"ephemeral"}`, string(blocks[0].CacheControl), "request %d: the static part is marked", i)
		assert.Empty(t, blocks[1].CacheControl, "request %d: the step's part is not marked", i)
		assert.Contains(t, blocks[1].Text, hanoi.CurrentStatePrefix, "request %d", i)
	}
	n := len(srv.requests)
	st := maker.EstimateTokens(static)
	assert.Equal(t, st, srv.billed.CacheWriteTokens, "the rules are written to the cache once")
	assert.Equal(t, (n-1)*st, srv.billed.CachedInputTokens, "and read from it by every later request")

	u := rep.Usage
	assert.Equal(t, srv.billed.InputTokens+srv.billed.CachedInputTokens+srv.billed.CacheWriteTokens, u.InputTokens,
		"InputTokens counts every prompt token, Anthropic's input_tokens plus its cache reads and writes")
	assert.Equal(t, srv.billed.CachedInputTokens, u.CachedInputTokens)
	assert.Equal(t, srv.billed.CacheWriteTokens, u.CacheWriteTokens)
	assert.Equal(t, srv.billed.OutputTokens, u.OutputTokens)
	want := (float64(srv.billed.InputTokens)*3 + float64(srv.billed.CachedInputTokens)*0.3 +
		float64(srv.billed.CacheWriteTokens)*3.75 + float64(srv.billed.OutputTokens)*15) / 1e6
	assert.InDelta(t, want, rep.Cost, 1e-12, "reads at the discount, writes at the premium")
	uncached := (float64(u.InputTokens)*3 + float64(u.OutputTokens)*15) / 1e6
	assert.Less(t, rep.Cost, uncached/2, "most of the prompt is read from the cache")
}

// Hanoi's own prompt (about 520 tokens, its system part about 380) is
// under every Anthropic model's minimum cacheable length, so it is sent
// as the task wrote it: rules in the system field, nothing marked.
func TestAnthropicShortPromptUnmarked(t *testing.T) {
	srv := &anthropicServer{cached: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	m, err := models.Open("anthropic:claude-sonnet-4-5", models.Options{BaseURL: ts.URL + "/v1", APIKey: "test-key", Timeout: 5 * time.Second})
	require.NoError(t, err)
	task, err := hanoi.New(2)
	require.NoError(t, err)
	rep, err := (&maker.Solver{Config: maker.Config{MaxTokens: 100, Vote: vote.Config{K: 1}}, Model: m}).Solve(context.Background(), task)
	require.NoError(t, err)
	require.True(t, rep.Done)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.NotEmpty(t, srv.requests)
	for i, req := range srv.requests {
		var system string
		require.NoError(t, json.Unmarshal(req.System, &system), "request %d", i)
		assert.Equal(t, hanoi.SystemPrompt, system, "request %d", i)
		for _, b := range req.Messages[0].Content {
			assert.Empty(t, b.CacheControl, "request %d", i)
		}
	}
	assert.Zero(t, rep.Usage.CachedInputTokens)
	assert.Zero(t, rep.Usage.CacheWriteTokens)
}

// The layout's rule, case by case.
func TestCacheLayout(t *testing.T) {
	long := strings.Repeat("x", 4*1024)
	sys := llms.TextParts(llms.ChatMessageTypeSystem, long)
	user := llms.TextParts(llms.ChatMessageTypeHuman, "step")
	got := cacheLayout([]llms.MessageContent{sys, user}, 1024)
	require.Len(t, got, 1)
	require.Len(t, got[0].Parts, 2)
	c, ok := got[0].Parts[0].(llms.CachedContent)
	require.True(t, ok)
	assert.Equal(t, "ephemeral", c.CacheControl.Type)
	assert.Equal(t, llms.TextContent{Text: long}, c.ContentPart)
	assert.Equal(t, llms.TextContent{Text: "step"}, got[0].Parts[1])
	assert.Len(t, user.Parts, 1, "the task's message is not changed")

	short := llms.TextParts(llms.ChatMessageTypeSystem, long[:4*700])
	in := []llms.MessageContent{short, user}
	assert.Equal(t, in, cacheLayout(in, 1024), "under three quarters of the minimum: as written")
	assert.Equal(t, in, cacheLayout([]llms.MessageContent{short, user}, 2048)[:2])
	noSystem := []llms.MessageContent{user}
	assert.Equal(t, noSystem, cacheLayout(noSystem, 1024))

	assert.Equal(t, 1024, MinCacheTokens("claude-sonnet-4-5"))
	assert.Equal(t, 1024, MinCacheTokens("claude-opus-4-1"))
	assert.Equal(t, 2048, MinCacheTokens("claude-3-5-haiku-latest"))
	assert.Equal(t, 4096, MinCacheTokens("claude-haiku-4-5"))
}

// TestAnthropicBaseURLIsTheHostRoot: ANTHROPIC_BASE_URL, as Anthropic's
// own SDKs read it, is the host root (they add /v1/messages), so a user's
// existing setting must reach /v1/messages; mdap's earlier form, the API
// root ending in /v1, still does too, and so does --base-url in either
// form.
func TestAnthropicBaseURLIsTheHostRoot(t *testing.T) {
	srv := &anthropicServer{cached: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	task, err := hanoi.New(2)
	require.NoError(t, err)
	msgs := task.Prompt(nil)
	for _, c := range []struct{ env, flag string }{
		{env: ts.URL}, {env: ts.URL + "/"}, {env: ts.URL + "/v1"},
		{flag: ts.URL}, {flag: ts.URL + "/v1/"},
	} {
		t.Setenv(EnvURL, c.env)
		m, err := models.Open("anthropic:claude-sonnet-4-5", models.Options{BaseURL: c.flag, APIKey: "test-key", Timeout: 5 * time.Second})
		require.NoError(t, err)
		_, err = m.GenerateContent(context.Background(), msgs, llms.WithMaxTokens(10))
		assert.NoError(t, err, "env %q, --base-url %q: the call reaches /v1/messages", c.env, c.flag)
	}
}

// TestAnthropicIdentityIsTheAPIRoot: the host root and the API root name
// one server, so a journal begun under either form (and the default's,
// which was the API root before) resumes under the other.
func TestAnthropicIdentityIsTheAPIRoot(t *testing.T) {
	t.Setenv(EnvURL, "")
	var ids []string
	for _, base := range []string{"", "https://api.anthropic.com", "https://api.anthropic.com/v1/"} {
		m, err := models.Open("anthropic:claude-sonnet-4-5", models.Options{BaseURL: base, APIKey: "test-key"})
		require.NoError(t, err)
		ids = append(ids, m.(maker.Identifier).Identity())
	}
	assert.Equal(t, []string{"anthropic:claude-sonnet-4-5@https://api.anthropic.com/v1", "anthropic:claude-sonnet-4-5@https://api.anthropic.com/v1", "anthropic:claude-sonnet-4-5@https://api.anthropic.com/v1"}, ids)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
