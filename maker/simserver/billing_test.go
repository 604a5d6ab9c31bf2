package simserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestBillingLikeAProvider: a request of n choices bills its prompt once
// and the choices' output; reasoning tokens are billed per choice up to
// max_tokens; a prompt seen before reports its cached prefix, as
// langchaingo reads it (PromptCachedTokens).
func TestBillingLikeAProvider(t *testing.T) {
	t.Parallel()
	cfg := hanoiConfig(sim.Config{Seed: 1, P: 1})
	cfg.Billing = simserver.Billing{CacheMinTokens: 256, CacheBlockTokens: 64, ReasoningTokens: 300}
	_, base := serve(t, cfg)
	m := client(t, base, 0)
	msgs := firstStep(t, 4)
	ctx := context.Background()
	one, err := m.GenerateContent(ctx, msgs, llms.WithSeed(1), llms.WithMaxTokens(750))
	require.NoError(t, err)
	three, err := m.GenerateContent(ctx, msgs, llms.WithSeed(1), llms.WithN(3), llms.WithMaxTokens(750))
	require.NoError(t, err)
	require.Len(t, three.Choices, 3)
	info1, info3 := one.Choices[0].GenerationInfo, three.Choices[0].GenerationInfo
	assert.Equal(t, info1["PromptTokens"], info3["PromptTokens"], "the prompt billed once whatever n")
	out1 := info1["CompletionTokens"].(int)
	assert.Equal(t, 3*out1, info3["CompletionTokens"], "P=1: three equal replies, each with its reasoning tokens")
	assert.Equal(t, maker.EstimateTokens(one.Choices[0].Content)+300, out1)
	assert.Equal(t, 300, info1["ReasoningTokens"])

	prompt := info1["PromptTokens"].(int)
	assert.Zero(t, info1["PromptCachedTokens"], "first sight")
	want := 256 + (prompt-256)/64*64
	assert.Equal(t, want, info3["PromptCachedTokens"], "the same prompt again: its longest cacheable prefix")

	capped, err := m.GenerateContent(ctx, msgs, llms.WithSeed(2), llms.WithMaxTokens(100))
	require.NoError(t, err)
	assert.Equal(t, 100, capped.Choices[0].GenerationInfo["CompletionTokens"], "reasoning stops at max_tokens")
}

// TestSolverReadsCachedTokens: a run through the server reports the
// cached input tokens the server billed, and prices them at the cached
// price; with the cache off there are none.
func TestSolverReadsCachedTokens(t *testing.T) {
	t.Parallel()
	price := maker.Price{InputPerMillion: 0.4, OutputPerMillion: 1.6, CachedInputPerMillion: 0.1}
	run := func(b simserver.Billing) maker.Report {
		cfg := hanoiConfig(sim.Config{Seed: 2, P: 0.95})
		cfg.Billing = b
		_, base := serve(t, cfg)
		task, err := hanoi.New(4)
		require.NoError(t, err)
		s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2}, Price: price}, Model: maker.ModelFunc(client(t, base, 0).GenerateContent)}
		rep, err := s.Solve(context.Background(), task)
		require.NoError(t, err)
		return rep
	}
	on := run(simserver.Billing{CacheMinTokens: 256, CacheBlockTokens: 64})
	off := run(simserver.Billing{CacheOff: true})
	assert.Positive(t, on.Usage.CachedInputTokens)
	assert.Zero(t, off.Usage.CachedInputTokens)
	assert.Equal(t, off.Usage.InputTokens, on.Usage.InputTokens)
	assert.InDelta(t, off.Cost-on.Cost, float64(on.Usage.CachedInputTokens)*(0.4-0.1)/1e6, 1e-12, "cached tokens at the cached price")
	defaults := run(simserver.Billing{})
	assert.Zero(t, defaults.Usage.CachedInputTokens, "OpenAI's rules: a hanoi prompt (about 520 tokens) is under the 1024-token minimum")
}

// TestProviderIgnoringNGivesEverySample: behind a proxy that drops n (as
// Ollama's /v1 and Anthropic do), a run with several samples per request
// still draws every sample once: the same steps, votes and samples as a
// run of one call per sample, and after the first short answer no
// request asks for n again.
func TestProviderIgnoringNGivesEverySample(t *testing.T) {
	t.Parallel()
	cfg := hanoiConfig(sim.Config{Seed: 8, P: 0.85, FlagRate: 0.05})
	srv, err := simserver.New(cfg)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	withN := 0
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.Method == http.MethodPost && json.NewDecoder(r.Body).Decode(&body) == nil {
			if n, ok := body["n"].(float64); ok && n > 1 {
				mu.Lock()
				withN++
				mu.Unlock()
			}
			delete(body, "n")
			b, _ := json.Marshal(body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	run := func(per int) (maker.Report, []string) {
		task, err := hanoi.New(5)
		require.NoError(t, err)
		var winners []string
		s := &maker.Solver{
			Config: maker.Config{Vote: vote.Config{K: 3}, SamplesPerCall: per},
			Model:  client(t, proxy.URL+"/v1", 0),
			Progress: func(e maker.Event) {
				winners = append(winners, fmt.Sprint(e.Record.Winner.Value, e.Record.Votes, e.Record.Counts))
			},
		}
		rep, err := s.Solve(context.Background(), task)
		require.NoError(t, err)
		return rep, winners
	}
	one, w1 := run(1)
	auto, w2 := run(maker.SamplesPerCallAuto)
	assert.Equal(t, w1, w2, "the same steps, votes and counts")
	assert.Equal(t, one.Launched, auto.Launched)
	assert.Equal(t, auto.Launched, auto.Usage.Requests, "every sample a request of its own once n is known to be ignored")
	assert.Equal(t, 1, withN, "n asked for once")
}

// TestBillingValidateNamesTheField: Billing.Validate refuses a negative
// cache setting and reasoning tokens outside 0 to MaxReasoningTokens with
// a field error naming the field, its value and the fix; New refuses the
// same Billing; the zero Billing and the bounds themselves are accepted.
func TestBillingValidateNamesTheField(t *testing.T) {
	t.Parallel()
	for b, want := range map[simserver.Billing]string{
		{CacheMinTokens: -1}:                                "invalid configuration: simserver.Billing: CacheMinTokens = -1: use a positive number of tokens",
		{CacheBlockTokens: -2}:                              "invalid configuration: simserver.Billing: CacheBlockTokens = -2: use a positive number of tokens",
		{CacheEntries: -3}:                                  "invalid configuration: simserver.Billing: CacheEntries = -3: use a positive number of prefixes",
		{CacheTTL: -time.Second}:                            "invalid configuration: simserver.Billing: CacheTTL = -1s: use a positive duration such as 5m",
		{ReasoningTokens: -1}:                               "invalid configuration: simserver.Billing: ReasoningTokens = -1: use 0 to 65536",
		{ReasoningTokens: simserver.MaxReasoningTokens + 1}: "invalid configuration: simserver.Billing: ReasoningTokens = 65537: use 0 to 65536",
	} {
		err := b.Validate()
		assert.EqualError(t, err, want)
		assert.ErrorIs(t, err, simserver.ErrConfig)
		var fe *sim.FieldError
		assert.ErrorAs(t, err, &fe)
		_, err = simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), Billing: b})
		assert.EqualError(t, err, want, "New refuses it too")
	}
	for _, b := range []simserver.Billing{{}, {ReasoningTokens: simserver.MaxReasoningTokens, CacheOff: true}, {CacheMinTokens: 1, CacheBlockTokens: 1, CacheEntries: 1, CacheTTL: time.Nanosecond}} {
		assert.NoError(t, b.Validate(), "%+v", b)
	}
}
