package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeEmbedder gives each text its fixed vector: deterministic, as a
// server's embedder must be.
type fakeEmbedder map[string][]float32

func (e fakeEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := e[t]
		if !ok {
			return nil, fmt.Errorf("no vector for %q", t)
		}
		out[i] = v
	}
	return out, nil
}

// The embedding and judge fields of a client's answer_schema use the
// server's own embedder and judge (Config.Embedder, Config.Judge): the
// vote tool then groups replies as a run with the same matcher does. A
// server without them refuses such fields, a client's schema naming a
// model is refused either way, and a failing embedder fails the call
// without a guessed class.
func TestVoteUsesTheServersEmbedderAndJudge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	embedding := map[string]any{"type": "object", "properties": map[string]any{
		"s": map[string]any{"type": "string", "x-mdap-match": map[string]any{"kind": "embedding", "threshold": 0.9}}}}
	judged := map[string]any{"type": "object", "properties": map[string]any{
		"city": map[string]any{"type": "string", "x-mdap-match": map[string]any{"kind": "judge", "seed": 1}}}}
	in := func(schema any, texts ...string) map[string]any {
		var cands []map[string]any
		for _, t := range texts {
			cands = append(cands, map[string]any{"text": t})
		}
		return map[string]any{"k": 2, "candidates": cands, "answer_schema": schema}
	}
	cats := in(embedding, `{"s": "the cat sat"}`, `{"s": "a cat sat"}`, `{"s": "dogs ran"}`)
	cities := in(judged, `{"city": "Paris"}`, `{"city": "PARIS, France"}`, `{"city": "Lyon"}`)

	bare, _ := connect(t, mcpserver.Config{})
	toolError(t, call(t, ctx, bare.ClientSession, "vote", cats, nil), "no embedder here")
	toolError(t, call(t, ctx, bare.ClientSession, "vote", cities, nil), "no judge here")

	vectors := fakeEmbedder{"the cat sat": {1, 0}, "a cat sat": {0.99, 0.14}, "dogs ran": {0, 1}}
	var asked []string
	judge := match.JudgeFunc(func(_ context.Context, answer string, candidates []string) (int, error) {
		asked = append(asked, answer)
		for i, c := range candidates {
			if strings.HasPrefix(strings.ToLower(answer), strings.ToLower(c)) || strings.HasPrefix(strings.ToLower(c), strings.ToLower(answer)) {
				return i, nil
			}
		}
		return -1, nil
	})
	served, _ := connect(t, mcpserver.Config{Embedder: vectors, Judge: judge})
	for name, args := range map[string]map[string]any{"embedding": cats, "judge": cities} {
		got := decode[mcpserver.VoteOutput](t, call(t, ctx, served.ClientSession, "vote", args, nil))
		require.True(t, got.Decided, "%s: %s", name, got.Message)
		assert.Equal(t, 1, got.Winner.DecidedAt, name)
		assert.Equal(t, got.Replies[0].Key, got.Replies[1].Key, "%s: the second reply joined the first's class", name)
	}
	assert.NotEmpty(t, asked, "the judge was asked")

	named := map[string]any{"type": "object", "properties": map[string]any{
		"s": map[string]any{"type": "string", "x-mdap-match": map[string]any{"kind": "embedding", "threshold": 0.9, "model": "ollama:evil"}}}}
	toolError(t, call(t, ctx, served.ClientSession, "vote", in(named, `{"s": "the cat sat"}`, `{"s": "a cat sat"}`), nil), "may not name")

	broken, _ := connect(t, mcpserver.Config{Embedder: failingEmbedder{}})
	res := call(t, ctx, broken.ClientSession, "vote", cats, nil)
	toolError(t, res, "embedder failed")
}

type failingEmbedder struct{}

func (failingEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("the embeddings server is down")
}

// The server's judge and embedder are bounded by its Timeout, as a model
// call is: one that never answers fails the call within it, whatever the
// client's own deadline.
func TestServersJudgeIsBoundedByTheTimeout(t *testing.T) {
	t.Parallel()
	hang := match.JudgeFunc(func(ctx context.Context, _ string, _ []string) (int, error) {
		<-ctx.Done()
		return -1, ctx.Err()
	})
	c, _ := connect(t, mcpserver.Config{Judge: hang, Timeout: 200 * time.Millisecond})
	judged := map[string]any{"type": "object", "properties": map[string]any{
		"city": map[string]any{"type": "string", "x-mdap-match": map[string]any{"kind": "judge"}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // the client's own, longer
	defer cancel()
	began := time.Now()
	res := call(t, ctx, c.ClientSession, "vote", map[string]any{"k": 2, "answer_schema": judged,
		"candidates": []map[string]any{{"text": `{"city": "Paris"}`}, {"text": `{"city": "PARIS"}`}}}, nil)
	toolError(t, res, "deadline exceeded")
	assert.Less(t, time.Since(began), 10*time.Second)
}
