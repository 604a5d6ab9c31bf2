package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// caching answers Hanoi steps correctly and reports usage the way a
// provider with a prompt cache does, under that provider's own
// GenerationInfo keys.
type caching struct {
	name string
	info map[string]any
}

func (c caching) Identity() string { return "caching:" + c.name }

func (c caching) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, prompt, opts...)
}

func (c caching) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	answer, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: sim.PromptText(msgs)})
	if err != nil {
		return nil, err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: answer, StopReason: "stop", GenerationInfo: c.info}}}, nil
}

// The cached and cache-write tokens a worker's provider reports reach the
// coordinator's usage over NATS as they do in process: OpenAI's
// PromptCachedTokens and Anthropic's cache reads and writes.
func TestCachedTokensCrossTheWire(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 30 * time.Second})
	cfg := vote.Config{K: 2, Parallel: 2}
	for _, m := range []caching{
		{"openai", map[string]any{"PromptTokens": 600, "CompletionTokens": 20, "PromptCachedTokens": 512}},
		{"anthropic", map[string]any{"InputTokens": 40, "OutputTokens": 20, "CacheReadInputTokens": 1500, "CacheCreationInputTokens": 30}},
	} {
		t.Run(m.name, func(t *testing.T) {
			_, wjs := connect(t, srv.ClientURL())
			runWorker(t, newWorker(t, wjs, m, cluster.WorkerConfig{Inflight: 2}))
			remote, err := d.Model(m.Identity())
			require.NoError(t, err)
			want, _ := solveHanoi(t, m, 3, cfg)
			got, _ := solveHanoi(t, remote, 3, cfg)
			require.Positive(t, want.Usage.CachedInputTokens)
			assert.Equal(t, want.Usage.InputTokens, got.Usage.InputTokens)
			assert.Equal(t, want.Usage.OutputTokens, got.Usage.OutputTokens)
			assert.Equal(t, want.Usage.CachedInputTokens, got.Usage.CachedInputTokens, "cached input over the wire")
			assert.Equal(t, want.Usage.CacheWriteTokens, got.Usage.CacheWriteTokens, "cache writes over the wire")
			p := maker.Price{InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75}
			assert.InDelta(t, p.Cost(want.Usage), p.Cost(got.Usage), 1e-12)
		})
	}
}
