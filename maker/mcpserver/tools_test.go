package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryToolHasDescribedSchemas(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{})
	res, err := c.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
		for kind, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			m, ok := schema.(map[string]any)
			require.True(t, ok, "%s: %s schema", tool.Name, kind)
			assert.Equal(t, "object", m["type"], "%s: %s schema", tool.Name, kind)
			props, _ := m["properties"].(map[string]any)
			require.NotEmpty(t, props, "%s: %s schema", tool.Name, kind)
			for name, p := range props {
				assert.NotEmpty(t, p.(map[string]any)["description"], "%s: %s property %s has no description", tool.Name, kind, name)
			}
		}
	}
	assert.ElementsMatch(t, []string{"vote", "sample_and_vote", "run_task", "kmin", "parse", "solve_problem"}, names)
}

func cand(text string) map[string]any { return map[string]any{"text": text} }

func TestVoteDecidesAtTheFirstLeadOfK(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{})
	ctx := context.Background()
	res := call(t, ctx, c.ClientSession, "vote", map[string]any{"k": 2, "candidates": []any{
		cand(`{"move": 1}`),
		cand(`{"move": 2}`),
		cand("I think the answer is probably one"),                       // red flag: no answer
		cand("```json\n{\"move\": 1.0}\n```"),                            // the same answer as 0, fenced
		map[string]any{"text": `{"move": 1}`, "finish_reason": "length"}, // cut off: never votes
		cand(`{ "move" : 1 }`),                                           // decides: 3 votes against 1
		cand(`{"move": 2}`),                                              // after the decision: not counted
	}}, nil)
	out := decode[mcpserver.VoteOutput](t, res)
	require.True(t, out.Decided, out.Message)
	assert.Equal(t, 5, out.Winner.DecidedAt)
	assert.Equal(t, 0, out.Winner.FirstIndex)
	assert.Equal(t, 3, out.Winner.Votes)
	assert.JSONEq(t, `{"move":1}`, out.Winner.Canonical)
	assert.Equal(t, out.Replies[0].Key, out.Winner.Key)
	assert.Equal(t, out.Replies[0].Key, out.Replies[3].Key, "fenced 1.0 votes with inline 1")
	assert.NotEqual(t, out.Replies[0].Key, out.Replies[1].Key)
	assert.Equal(t, "unparseable", out.Replies[2].Flag)
	assert.NotEmpty(t, out.Replies[2].Reason)
	assert.Equal(t, "cut off", out.Replies[4].Flag)
	assert.Equal(t, map[string]int{"unparseable": 1, "cut off": 1}, out.Tally.Flags)
	assert.Equal(t, 4, out.Tally.Valid)
	assert.False(t, out.Replies[6].Counted)
	assert.True(t, out.Replies[5].Counted)
	require.Len(t, out.Tally.Votes, 2)
	assert.Equal(t, 3, out.Tally.Votes[0].Votes)
	assert.Equal(t, 1, out.Tally.Votes[1].Votes, "the reply after the decision is not tallied")
}

func TestVoteUndecidedSaysHowManyMore(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{})
	out := decode[mcpserver.VoteOutput](t, call(t, context.Background(), c.ClientSession, "vote", map[string]any{"k": 3, "candidates": []any{
		cand(`{"a": 1}`), cand(`{"a": 2}`), cand(`{"a": 1}`), cand(``),
	}}, nil))
	assert.False(t, out.Decided)
	assert.Nil(t, out.Winner)
	assert.Equal(t, 1, out.Lead)
	assert.Equal(t, 2, out.Need, "the leader needs k - lead = 2 more votes at the least")
	assert.Equal(t, out.Replies[0].Key, out.Leader)
	assert.Contains(t, out.Message, "undecided, need more samples")
	assert.Contains(t, out.Message, "at least 2 samples")
	assert.Equal(t, "empty", out.Replies[3].Flag)

	none := decode[mcpserver.VoteOutput](t, call(t, context.Background(), c.ClientSession, "vote", map[string]any{"candidates": []any{}}, nil))
	assert.False(t, none.Decided)
	assert.Equal(t, 3, none.Need, "with no votes the default k = 3 is needed")
}

func TestVoteNativeToolCallVotesWithItsTextForm(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{})
	native := map[string]any{"tool_calls": []any{map[string]any{
		"id": "call_1", "type": "function",
		"function": map[string]any{"name": "read_file", "arguments": `{"path": "a.go"}`},
	}}}
	objectArgs := map[string]any{"tool_calls": []any{map[string]any{
		"function": map[string]any{"name": "read_file", "arguments": map[string]any{"path": "a.go"}},
	}}}
	out := decode[mcpserver.VoteOutput](t, call(t, context.Background(), c.ClientSession, "vote", map[string]any{"k": 3, "candidates": []any{
		native,
		cand(`{"tool_intent": {"tool": "read_file", "args": {"path": "a.go"}, "rationale": "look"}}`),
		objectArgs,
	}}, nil))
	require.True(t, out.Decided, out.Message)
	require.NotNil(t, out.Winner.Output.Intent)
	assert.Equal(t, "read_file", out.Winner.Output.Intent.Tool)
	assert.Equal(t, map[string]any{"path": "a.go"}, out.Winner.Output.Intent.Args)
}

// TestVoteAgreesWithRace checks the vote tool's rule against vote.Race on
// random sequences of votes and red flags.
func TestVoteAgreesWithRace(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		k := 1 + rng.IntN(3)
		n := rng.IntN(12)
		var cands []mcpserver.Candidate
		var samples []vote.Sample[int]
		for range n {
			if rng.IntN(5) == 0 {
				cands = append(cands, mcpserver.Candidate{Text: "no answer here"})
				samples = append(samples, vote.Sample[int]{Flag: fmt.Errorf("unparseable")})
				continue
			}
			a := rng.IntN(3)
			cands = append(cands, mcpserver.Candidate{Text: fmt.Sprintf(`{"a": %d}`, a)})
			samples = append(samples, vote.Sample[int]{Value: a, Key: uint64(a) + 1})
		}
		got, err := mcpserver.Vote(mcpserver.VoteInput{Candidates: cands, K: k}, 10)
		require.NoError(t, err)
		if n < k {
			assert.False(t, got.Decided, "trial %d", trial)
			flagged := 0
			for _, s := range samples {
				if s.Flag != nil {
					flagged++
				}
			}
			assert.Equal(t, flagged, got.Tally.Flagged, "trial %d", trial)
			assert.Equal(t, n-flagged, got.Tally.Valid, "trial %d", trial)
			continue
		}
		res, err := vote.Race(context.Background(), vote.Config{K: k, Parallel: 1, MaxSamples: n}, func(_ context.Context, i int) vote.Sample[int] {
			return samples[i]
		})
		require.Equal(t, err == nil, got.Decided, "trial %d: k %d, %v", trial, k, cands)
		tally := res.Tally
		if u, ok := errors.AsType[*vote.UndecidedError](err); ok {
			tally = u.Tally
		}
		assert.Equal(t, tally.Flagged, got.Tally.Flagged, "trial %d: red flags counted", trial)
		assert.Equal(t, tally.Valid, got.Tally.Valid, "trial %d: valid votes counted", trial)
		assert.Equal(t, tally.Flags["unparseable"], got.Tally.Flags["unparseable"], "trial %d", trial)
		counted := 0
		for _, r := range got.Replies {
			if r.Counted {
				counted++
			}
		}
		assert.Equal(t, tally.Valid+tally.Flagged, counted, "trial %d: the replies marked counted", trial)
		if err != nil {
			continue
		}
		assert.Equal(t, res.Valid+res.Flagged-1, got.Winner.DecidedAt, "trial %d", trial)
		assert.JSONEq(t, fmt.Sprintf(`{"a":%d}`, res.Winner), got.Winner.Canonical, "trial %d", trial)
	}
}

func TestParseShowsFlagOrKey(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{})
	ctx := context.Background()
	a := decode[mcpserver.ParseOutput](t, call(t, ctx, c.ClientSession, "parse", map[string]any{"reply": cand(`{"b": [1, 2], "a": null}`)}, nil))
	b := decode[mcpserver.ParseOutput](t, call(t, ctx, c.ClientSession, "parse", map[string]any{"reply": cand("```json\n{\"a\":null,\"b\":[1.0,2]}\n```")}, nil))
	assert.True(t, a.Votes)
	assert.Equal(t, a.Key, b.Key)
	assert.JSONEq(t, `{"a":null,"b":[1,2]}`, a.Canonical)
	long := decode[mcpserver.ParseOutput](t, call(t, ctx, c.ClientSession, "parse", map[string]any{"reply": map[string]any{"text": `{"a": 1}`, "output_tokens": 900}}, nil))
	assert.False(t, long.Votes)
	assert.Equal(t, "overlong", long.Flag)
	capped := decode[mcpserver.ParseOutput](t, call(t, ctx, c.ClientSession, "parse", map[string]any{"reply": map[string]any{"text": `{"a": 1}`, "output_tokens": 900}, "max_tokens": 1000}, nil))
	assert.True(t, capped.Votes)
}

func TestKMinGivesThePapersTable(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{})
	ctx := context.Background()
	for p, want := range map[float64]int{0.9978: 3, 0.6429: 29} {
		out := decode[mcpserver.KMinOutput](t, call(t, ctx, c.ClientSession, "kmin", map[string]any{"steps": 1<<20 - 1, "p": p}, nil))
		assert.Equal(t, want, out.KMin, "p %v", p)
		assert.GreaterOrEqual(t, out.PFull, 0.95)
		assert.Less(t, out.PFullKMinus1, 0.95)
		assert.Equal(t, 0.95, out.Target)
		assert.InDelta(t, laws.ExpectedSamples(p, want), out.SamplesPerStep, 1e-12)
	}
	toolError(t, call(t, ctx, c.ClientSession, "kmin", map[string]any{"steps": 10, "p": 0.5}, nil), "p 0.5", "no margin helps")
	toolError(t, call(t, ctx, c.ClientSession, "kmin", map[string]any{"steps": 10, "p": 0.9, "valid_rate": 2}, nil), "valid_rate")
	// A cost past a float64 (no JSON says +Inf) is refused, naming price.
	toolError(t, call(t, ctx, c.ClientSession, "kmin", map[string]any{"steps": 1 << 20, "p": 0.9, "price": 1e305}, nil), "price = 1e+305", "overflows")
	_, err := mcpserver.KMin(mcpserver.KMinInput{Steps: 1 << 20, P: 0.9, Price: 1e305})
	require.ErrorIs(t, err, mcpserver.ErrArgument)
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{MaxCandidates: 3})
	ctx := context.Background()
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"vote", map[string]any{"candidates": "nope"}, "candidates"},
		{"vote", map[string]any{"candidates": []any{}, "colour": 1}, "colour"},
		{"vote", map[string]any{"candidates": []any{}, "k": 0.5}, "k"},
		{"vote", map[string]any{"candidates": []any{}, "k": 101}, "k 101: use 1 to 100"},
		{"vote", map[string]any{"candidates": []any{cand("a"), cand("b"), cand("c"), cand("d")}}, "at most 3"},
		{"parse", map[string]any{}, "reply"},
		{"parse", map[string]any{"reply": cand("x"), "max_tokens": -1}, "max_tokens -1"},
		{"kmin", map[string]any{"steps": "many", "p": 0.9}, "steps"},
		{"sample_and_vote", map[string]any{"messages": []any{map[string]any{"role": "robot", "content": "hi"}}}, `role "robot"`},
		{"sample_and_vote", map[string]any{"messages": []any{}}, "messages is empty"},
	} {
		toolError(t, call(t, ctx, c.ClientSession, tc.tool, tc.args, nil), tc.want)
	}
	// The server still serves.
	out := decode[mcpserver.KMinOutput](t, call(t, ctx, c.ClientSession, "kmin", map[string]any{"steps": 1000, "p": 0.99}, nil))
	assert.Positive(t, out.KMin)
}

func TestSampleAndVoteOnTheSimulatedModel(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{}
	cfg.Sim.P, cfg.Sim.FlagRate, cfg.Sim.WrongAnswers, cfg.Sim.Seed = 0.7, 0.2, 2, 5
	c, _ := connect(t, cfg)
	res := call(t, context.Background(), c.ClientSession, "sample_and_vote", map[string]any{"messages": hanoiMessages(4), "k": 3}, 7)
	out := decode[mcpserver.SampleAndVoteOutput](t, res)
	require.True(t, out.Decided, out.Message)
	want, err := hanoi.CorrectAnswer(hanoi.Start(4), nil)
	require.NoError(t, err)
	assert.JSONEq(t, want.JSON(), out.Winner.Canonical)
	assert.JSONEq(t, want.JSON(), out.WinnerText)
	assert.Contains(t, out.Model, "sim seed=5")
	// Every sample is listed, and each sent one progress notification.
	require.Len(t, out.Samples, out.Launched)
	require.Eventually(t, func() bool { return len(c.notes(7)) == out.Launched }, 5*time.Second, time.Millisecond)
	for i, n := range c.notes(7) {
		assert.Equal(t, float64(i+1), n.Progress, "progress increases")
	}
	counted := 0
	for _, s := range out.Samples {
		if s.Counted {
			counted++
		}
	}
	assert.Equal(t, out.Tally.Valid+out.Tally.Flagged+out.Errors, counted)
	assert.Equal(t, 0.0, out.Samples[0].Temperature)
	assert.Equal(t, 0.1, out.Samples[1].Temperature)
	assert.Positive(t, out.Usage.OutputTokens)

	// The same prompt gives the same race: the sim draws per (seed, sample).
	again := decode[mcpserver.SampleAndVoteOutput](t, call(t, context.Background(), c.ClientSession, "sample_and_vote", map[string]any{"messages": hanoiMessages(4), "k": 3, "parallel": 1}, nil))
	assert.Equal(t, out.Tally, again.Tally)
}

func TestSampleAndVoteUndecidedWithinItsBudget(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{}
	cfg.Sim.P, cfg.Sim.WrongAnswers, cfg.Sim.Seed = 0.55, 1, 3
	c, _ := connect(t, cfg)
	out := decode[mcpserver.SampleAndVoteOutput](t, call(t, context.Background(), c.ClientSession, "sample_and_vote",
		map[string]any{"messages": hanoiMessages(3), "k": 8, "max_samples": 8, "temperatures": []float64{0.3}}, nil))
	require.False(t, out.Decided)
	assert.Equal(t, 8-out.Lead, out.Need)
	assert.Contains(t, out.Message, "undecided, need more samples")
	assert.Equal(t, 0.3, out.Samples[0].Temperature)
}

func TestSampleAndVoteRefusals(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{Models: []string{"sim"}, MaxSamples: 50})
	ctx := context.Background()
	msgs := hanoiMessages(3)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"messages": msgs, "models": []string{"openai:gpt-4.1"}}, `"openai:gpt-4.1" is not one of this server's models`},
		{map[string]any{"messages": msgs, "base_url": "http://169.254.169.254/"}, "--allow-any-model"},
		{map[string]any{"messages": msgs, "models": []string{"nonsense"}}, "bad model spec"},
		{map[string]any{"messages": msgs, "max_samples": 51}, "max_samples 51: use k (3) to 50"},
		{map[string]any{"messages": msgs, "k": 4, "parallel": 5}, "parallel 5"},
		{map[string]any{"messages": msgs, "temperatures": []float64{0, 3}}, "temperatures[1] = 3"},
		{map[string]any{"messages": []any{map[string]any{"role": "user", "content": "What is 2+2?"}}}, "only Towers of Hanoi step prompts"},
	} {
		toolError(t, call(t, ctx, c.ClientSession, "sample_and_vote", tc.args, nil), tc.want)
	}
}

func TestSampleAndVoteIsCancelled(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{}
	cfg.Sim.P, cfg.Sim.Seed = 0.6, 1
	cfg.Sim.WrongAnswers = 1
	cfg.Sim.Latency = sim.FixedLatency(20 * time.Millisecond)
	c, _ := connect(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "sample_and_vote", Arguments: map[string]any{"messages": hanoiMessages(3), "k": 50, "parallel": 1}}
		p.SetProgressToken(1)
		_, err := c.CallTool(ctx, p)
		done <- err
	}()
	<-c.notified // one sample drawn
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	// The server keeps serving.
	out := decode[mcpserver.KMinOutput](t, call(t, context.Background(), c.ClientSession, "kmin", map[string]any{"steps": 10, "p": 0.9}, nil))
	assert.Positive(t, out.KMin)
}
