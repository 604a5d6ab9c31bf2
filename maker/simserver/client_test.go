package simserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/inspect"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// reply is what a client sees of one call.
type reply struct {
	Text, Stop    string
	Calls         []llms.ToolCall
	Prompt, Compl int
	Err           bool
	RateLimit     bool // the error is a rate-limit error to langchaingo
}

func call(t testing.TB, m llms.Model, msgs []llms.MessageContent, opts ...llms.CallOption) reply {
	t.Helper()
	resp, err := m.GenerateContent(context.Background(), msgs, opts...)
	if err != nil {
		return reply{Err: true, RateLimit: llms.IsRateLimitError(err)}
	}
	c := resp.Choices[0]
	return reply{Text: c.Content, Stop: c.StopReason, Calls: c.ToolCalls,
		Prompt: c.GenerationInfo["PromptTokens"].(int), Compl: c.GenerationInfo["CompletionTokens"].(int)}
}

func TestThroughLangchaingoClient(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	m := client(t, base, 10*time.Second)
	msgs := firstStep(t, 5)
	r := call(t, m, msgs, llms.WithMaxTokens(750), llms.WithTemperature(0))
	require.False(t, r.Err)
	a, err := hanoi.ParseReply(r.Text, 5)
	require.NoError(t, err)
	assert.Equal(t, hanoi.Move{Disk: 1, From: 0, To: 2}, a.Move, "5 disks: disk 1 cycles 0 -> 2 -> 1")
	assert.Equal(t, "stop", r.Stop)
	assert.Equal(t, maker.EstimateTokens(sim.PromptText(msgs)), r.Prompt)
	assert.Equal(t, maker.EstimateTokens(r.Text), r.Compl)

	r = call(t, m, msgs, llms.WithMaxTokens(2))
	assert.Equal(t, "length", r.Stop, "a cut reply says so")
	assert.Equal(t, 2, r.Compl)
}

// run sends n requests for each of the first steps of a hanoi task, one at
// a time, and returns the replies.
func sequentialReplies(t *testing.T, base string, opts func(i int) []llms.CallOption) []reply {
	m := client(t, base, 10*time.Second)
	var out []reply
	for step, n := range []int{3, 4, 5} {
		msgs := firstStep(t, n)
		for i := range 30 {
			out = append(out, call(t, m, msgs, opts(step*100+i)...))
		}
	}
	return out
}

func TestSequentialClientIsReproducible(t *testing.T) {
	t.Parallel()
	none := func(int) []llms.CallOption { return []llms.CallOption{llms.WithMaxTokens(750)} }
	faults := simserver.Faults{RateLimit: 0.05, ServerError: 0.05, Truncate: 0.05, Garbage: 0.05}
	cfg := hanoiConfig(mixed(11))
	cfg.Faults = faults
	_, a := serve(t, cfg)
	_, b := serve(t, cfg)
	first, second := sequentialReplies(t, a, none), sequentialReplies(t, b, none)
	assert.Equal(t, first, second, "two sequential runs against fresh servers with the same seed")

	// The run is varied enough for the comparison to mean something.
	texts := map[string]bool{}
	errs := 0
	for _, r := range first {
		texts[r.Text] = true
		if r.Err {
			errs++
		}
	}
	assert.Greater(t, len(texts), 10)
	assert.Positive(t, errs)

	cfg.Sim.Seed = 12
	_, c := serve(t, cfg)
	assert.NotEqual(t, first, sequentialReplies(t, c, none), "another seed, other replies")
}

func TestSeedFieldIsTheSampleIndex(t *testing.T) {
	t.Parallel()
	// With the standard seed field (llms.WithSeed, which langchaingo sends
	// as "seed"), a reply depends on the seed, not on arrival order: many
	// concurrent requests get what sequential ones get.
	cfg := hanoiConfig(mixed(5))
	withSeed := func(i int) []llms.CallOption { return []llms.CallOption{llms.WithSeed(i + 1), llms.WithMaxTokens(750)} }
	_, a := serve(t, cfg)
	want := sequentialReplies(t, a, withSeed)

	_, b := serve(t, cfg)
	m := client(t, b, 10*time.Second)
	got := make([]reply, len(want))
	var wg sync.WaitGroup
	for i := len(got) - 1; i >= 0; i-- {
		step, k := i/30, i%30
		wg.Go(func() { got[i] = call(t, m, firstStep(t, 3+step), withSeed(step*100+k)...) })
	}
	wg.Wait()
	assert.Equal(t, want, got)

	// The same seed again is the same sample.
	_, c := serve(t, cfg)
	mc := client(t, c, 10*time.Second)
	assert.Equal(t, want[7], call(t, mc, firstStep(t, 3), withSeed(7)...))
	assert.Equal(t, want[7], call(t, mc, firstStep(t, 3), withSeed(7)...))

	// A seed is a sample index like the arrival counter's: a fresh
	// server's first three unseeded requests are seeds 0, 1 and 2 (sent
	// raw: langchaingo omits a seed of 0).
	_, d := serve(t, cfg)
	_, e := serve(t, cfg)
	for i := range 3 {
		_, _, unseeded := post(t, d+"/chat/completions", map[string]any{"messages": wire(firstStep(t, 3))})
		_, _, seeded := post(t, e+"/chat/completions", map[string]any{"messages": wire(firstStep(t, 3)), "seed": i})
		assert.Equal(t, seeded["choices"], unseeded["choices"], "index %d", i)
		assert.Equal(t, seeded["error"], unseeded["error"], "index %d", i)
	}
}

func TestArrivalOrderOnlyPermutesConcurrentReplies(t *testing.T) {
	t.Parallel()
	cfg := hanoiConfig(mixed(21))
	msgs := firstStep(t, 6)
	_, a := serve(t, cfg)
	ma := client(t, a, 10*time.Second)
	var want []string
	for range 40 {
		want = append(want, fmt.Sprint(call(t, ma, msgs)))
	}
	_, b := serve(t, cfg)
	mb := client(t, b, 10*time.Second)
	got := make([]string, 40)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = fmt.Sprint(call(t, mb, msgs)) })
	}
	wg.Wait()
	slices.Sort(want)
	slices.Sort(got)
	assert.Equal(t, want, got, "the same 40 samples, in whatever order they arrived")
}

func TestHanoiSolvesThroughTheServer(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 4, 0.9, 0.05
	s, base := serve(t, hanoiConfig(cfg))
	task, err := hanoi.New(5)
	require.NoError(t, err)
	rep, err := (&maker.Solver{Model: client(t, base, 10*time.Second)}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.True(t, task.Solved())
	assert.Zero(t, task.WrongSteps())
	assert.Equal(t, 31, rep.Steps)
	assert.Positive(t, rep.Flagged, "red flags come through HTTP")
	st := s.Stats()
	assert.Equal(t, uint64(rep.Launched), st.Requests)
	assert.Positive(t, rep.Usage.InputTokens)
}

// findVersion is the spec task whose script proposes two tool calls.
func findVersion(t *testing.T) *spec.Spec {
	t.Helper()
	s, err := spec.Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	return s
}

// specTools declares the spec's tools as functions.
func specTools(s *spec.Spec) []llms.Tool {
	var out []llms.Tool
	for _, name := range s.Tools {
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Parameters: map[string]any{"type": "object"}}})
	}
	return out
}

func TestNativeToolCallsVoteWithTextIntents(t *testing.T) {
	t.Parallel()
	sp := findVersion(t)
	_, base := serve(t, simserver.Config{Oracle: spec.Oracle{Spec: sp}, Sim: sim.Config{Seed: 1, P: 1}})
	m := client(t, base, 10*time.Second)
	msgs := spec.New(sp).Prompt(nil)

	native := call(t, m, msgs, llms.WithTools(specTools(sp)), llms.WithSeed(1))
	require.False(t, native.Err)
	require.Len(t, native.Calls, 1, "tools declared: a native call")
	assert.Equal(t, "tool_calls", native.Stop)
	assert.Empty(t, native.Text)
	assert.Equal(t, "grep", native.Calls[0].FunctionCall.Name)
	assert.JSONEq(t, `{"pattern": "Version = ", "paths": ["src"]}`, native.Calls[0].FunctionCall.Arguments)
	assert.Regexp(t, `^call_[0-9a-f]{16}$`, native.Calls[0].ID)

	text := call(t, m, msgs, llms.WithSeed(1))
	require.Empty(t, text.Calls, "no tools declared: the intent stays text")
	assert.Contains(t, text.Text, `"tool_intent"`)
	none := call(t, m, msgs, llms.WithTools(specTools(sp)), llms.WithToolChoice("none"), llms.WithSeed(1))
	assert.Empty(t, none.Calls, "tool_choice none: text")
	only := call(t, m, msgs, llms.WithTools(specTools(sp)[:1]), llms.WithSeed(1)) // read_file only
	assert.Empty(t, only.Calls, "an intent for an undeclared tool stays text")

	a := inspect.Reply(maker.Reply{ToolCalls: native.Calls, StopReason: native.Stop, OutputTokens: native.Compl}, 0, maker.FlagRules{}, nil)
	b := inspect.Reply(maker.Reply{Text: text.Text, StopReason: text.Stop, OutputTokens: text.Compl}, 0, maker.FlagRules{}, nil)
	require.Empty(t, a.Flag, a.Reason)
	require.Empty(t, b.Flag, b.Reason)
	assert.Equal(t, a.Key, b.Key, "a native call and the same intent as text vote together")
	assert.Equal(t, a.Canonical, b.Canonical)
}

// toolCounter counts the replies that came back as native tool calls.
func toolCounter(m llms.Model, n *int, mu *sync.Mutex) llms.Model {
	return maker.ModelFunc(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		resp, err := m.GenerateContent(ctx, msgs, opts...)
		if err == nil && len(resp.Choices[0].ToolCalls) > 0 {
			mu.Lock()
			*n++
			mu.Unlock()
		}
		return resp, err
	})
}

func TestSpecTaskWithNativeToolCallsSolves(t *testing.T) {
	t.Parallel()
	sp := findVersion(t)
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.WrongAnswers, cfg.FlagRate = 3, 0.8, 3, 0.05
	_, base := serve(t, simserver.Config{Oracle: spec.Oracle{Spec: sp}, Sim: cfg})
	ex, err := fstools.New("../../testdata/spec/repo")
	require.NoError(t, err)
	var native int
	var mu sync.Mutex
	task := spec.New(sp)
	rep, err := (&maker.Solver{
		Config:   maker.Config{ToolDeclaration: maker.DeclareNative, Vote: vote.Config{K: 3}},
		Model:    toolCounter(client(t, base, 10*time.Second), &native, &mu),
		Executor: ex,
		Tools:    specTools(sp),
	}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.True(t, task.Done())
	assert.JSONEq(t, `{"version":"1.4.2","file":"src/version.go"}`, string(task.State()))
	assert.Equal(t, 2, rep.ToolCalls, "both tool steps won and ran")
	assert.GreaterOrEqual(t, native, 6, "the tool steps were voted on native calls (k = 3 each)")
}

func TestEnsembleOfTwoServers(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.P, cfg.FlagRate = 0.9, 0.02
	cfg.Seed = 1
	_, a := serve(t, hanoiConfig(cfg))
	cfg.Seed = 2
	_, b := serve(t, hanoiConfig(cfg))
	ens, err := maker.NewEnsemble(client(t, a, 10*time.Second), client(t, b, 10*time.Second))
	require.NoError(t, err)
	task, err := hanoi.New(4)
	require.NoError(t, err)
	rep, err := (&maker.Solver{Model: ens}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.True(t, task.Solved())
	require.Len(t, rep.Models, 2)
	assert.Equal(t, "openai:sim@"+a, rep.Models[0].Model)
	assert.Equal(t, "openai:sim@"+b, rep.Models[1].Model)
	for _, m := range rep.Models {
		assert.Positive(t, m.Valid, m.Model)
		assert.Positive(t, m.WinnerVotes, m.Model)
		assert.Positive(t, m.Usage.InputTokens, m.Model)
	}
	assert.Equal(t, rep.Launched, rep.Models[0].Launched+rep.Models[1].Launched)
}

func TestEachFaultThroughTheClient(t *testing.T) {
	msgs := firstStep(t, 3)
	for _, tc := range []struct {
		name   string
		faults simserver.Faults
		stat   func(simserver.Stats) uint64
		want   string // in the client's error
	}{
		{"429", simserver.Faults{RateLimit: 1, RetryAfter: 7}, func(s simserver.Stats) uint64 { return s.RateLimited }, "rate_limit"},
		{"500", simserver.Faults{ServerError: 1}, func(s simserver.Stats) uint64 { return s.ServerErrors }, "500"},
		{"hang", simserver.Faults{Hang: 1}, func(s simserver.Stats) uint64 { return s.Hangs }, "timeout"},
		{"truncate", simserver.Faults{Truncate: 1}, func(s simserver.Stats) uint64 { return s.Truncated }, "EOF"},
		{"garbage", simserver.Faults{Garbage: 1}, func(s simserver.Stats) uint64 { return s.Garbage }, ""},
	} {
		cfg := hanoiConfig(sim.Config{Seed: 1, P: 1})
		cfg.Faults = tc.faults
		s, base := serve(t, cfg)
		const timeout = 300 * time.Millisecond
		m := client(t, base, timeout)
		for i := range 3 { // three garbage kinds, by seed
			start := time.Now()
			_, err := m.GenerateContent(context.Background(), msgs, llms.WithSeed(i+1))
			took := time.Since(start)
			require.Error(t, err, tc.name)
			assert.Contains(t, err.Error(), tc.want, tc.name)
			assert.Less(t, took, timeout+2*time.Second, "%s: the error comes in bounded time", tc.name)
			if tc.name == "hang" {
				assert.GreaterOrEqual(t, took, timeout, "a hang lasts until the client gives up")
			}
			if tc.name == "429" {
				assert.True(t, llms.IsRateLimitError(err), "a 429 is a rate-limit error to langchaingo: %v", err)
			}
		}
		assert.Equal(t, uint64(3), tc.stat(s.Stats()), tc.name)
		assert.Equal(t, uint64(3), s.Stats().Faults(), tc.name)
	}

	// The headers and bodies a raw client sees.
	cfg := hanoiConfig(sim.Config{Seed: 1, P: 1})
	cfg.Faults = simserver.Faults{RateLimit: 1, RetryAfter: 7}
	_, base := serve(t, cfg)
	code, hdr, body := post(t, base+"/chat/completions", map[string]any{"messages": wire(msgs)})
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.Equal(t, "7", hdr.Get("Retry-After"))
	assert.Equal(t, "rate_limit_error", errorOf(t, body)["type"])

	cfg.Faults = simserver.Faults{ServerError: 1}
	_, base = serve(t, cfg)
	code, _, body = post(t, base+"/chat/completions", map[string]any{"messages": wire(msgs)})
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Equal(t, "server_error", errorOf(t, body)["type"])

	cfg.Faults = simserver.Faults{Garbage: 1}
	_, base = serve(t, cfg)
	starts := map[byte]bool{}
	for i := range 30 {
		b, err := json.Marshal(map[string]any{"messages": wire(msgs), "seed": i})
		require.NoError(t, err)
		resp, err := http.Post(base+"/chat/completions", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.False(t, json.Valid(raw), "%q is not JSON", raw)
		starts[raw[0]] = true
	}
	assert.Equal(t, map[byte]bool{'<': true, '{': true, 0: true}, starts, "an HTML page, broken JSON and binary noise")
}

func TestTruncatedBodyIsAPrefixOfTheReply(t *testing.T) {
	t.Parallel()
	cfg := hanoiConfig(sim.Config{Seed: 1, P: 1})
	_, whole := serve(t, cfg)
	cfg.Faults = simserver.Faults{Truncate: 1}
	_, cut := serve(t, cfg)
	req := map[string]any{"messages": wire(firstStep(t, 3)), "seed": 3}
	b, err := json.Marshal(req)
	require.NoError(t, err)
	read := func(url string) (string, int64, error) {
		resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(string(b)))
		require.NoError(t, err)
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 512)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				if err.Error() == "EOF" {
					err = nil
				}
				return sb.String(), resp.ContentLength, err
			}
		}
	}
	full, n, err := read(whole)
	require.NoError(t, err)
	part, m, err := read(cut)
	assert.Error(t, err, "the connection closes before Content-Length bytes")
	assert.Equal(t, n, m, "the headers announce the whole reply")
	require.NotEmpty(t, part)
	// Replies differ only in their id (unique per request) and created
	// time.
	anyID := regexp.MustCompile(`chatcmpl-sim-[0-9a-f]{16}`)
	full, part = anyID.ReplaceAllString(full, "ID"), anyID.ReplaceAllString(part, "ID")
	idx := strings.Index(full, `"created":`)
	require.Positive(t, idx)
	assert.Equal(t, full[:min(len(part), idx)], part[:min(len(part), idx)])
	assert.Less(t, len(part), len(full))
}

func TestSolverSurvivesAFaultMix(t *testing.T) {
	// 30% of requests fail: 6% each of 429, 500, hang, truncate and
	// garbage. Each failed sample is retried under the vote's error budget;
	// hangs end at the client's timeout.
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 8, 0.95
	s, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg,
		Faults: simserver.Faults{RateLimit: 0.06, ServerError: 0.06, Hang: 0.06, Truncate: 0.06, Garbage: 0.06}})
	require.NoError(t, err)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(s.Close)
	base := hs.URL + "/v1"
	task, err := hanoi.New(5)
	require.NoError(t, err)
	start := time.Now()
	rep, err := (&maker.Solver{
		Config: maker.Config{Vote: vote.Config{K: 3, MaxErrors: 20, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}},
		Model:  client(t, base, 300*time.Millisecond),
	}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.True(t, task.Solved())
	assert.Zero(t, task.WrongSteps())
	// A request the client gave up on (its timeout, or the vote decided)
	// may still be in its handler when Solve returns: the counts are read
	// once every handler has ended.
	s.Close()
	hs.Close()
	st := s.Stats()
	t.Logf("%d requests, %d faults (429 %d, 500 %d, hang %d, truncate %d, garbage %d), %d unanswered, %d errors counted, %s",
		st.Requests, st.Faults(), st.RateLimited, st.ServerErrors, st.Hangs, st.Truncated, st.Garbage, st.Unanswered, rep.Errors, time.Since(start))
	for name, n := range map[string]uint64{"429": st.RateLimited, "500": st.ServerErrors, "hang": st.Hangs, "truncate": st.Truncated, "garbage": st.Garbage} {
		assert.Positive(t, n, "fault %s was served", name)
	}
	assert.InDelta(t, 0.3, float64(st.Faults())/float64(st.Requests), 0.1)
	assert.LessOrEqual(t, st.Requests, uint64(rep.Launched), "a launched sample is one request at most (on a loaded machine a call may end before it is sent)")
	assert.GreaterOrEqual(t, st.Requests, uint64(rep.Valid+rep.Flagged+rep.Errors)-uint64(rep.Errors), "every sample that got an answer was a request")
	// A client gone while its body was read counts as a bad request.
	assert.Zero(t, st.ProviderErrors, "the sim's own errors are off")
	assert.Equal(t, st.Requests, st.Replies+st.Faults()+st.Unanswered+st.BadRequests,
		"every request is counted once: a reply, a fault, unanswered (its client gone before the reply was ready) or refused; a truncated reply is a fault, not a reply")
	assert.LessOrEqual(t, uint64(rep.Valid+rep.Flagged), st.Replies, "a reply may still time out on a loaded machine")
}

func TestRetriesAreBoundedByTheErrorBudget(t *testing.T) {
	t.Parallel()
	s, base := serve(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), Faults: simserver.Faults{ServerError: 1}})
	task, err := hanoi.New(3)
	require.NoError(t, err)
	_, err = (&maker.Solver{
		Config: maker.Config{Vote: vote.Config{K: 3, Parallel: 1, MaxErrors: 4, Backoff: time.Millisecond}},
		Model:  client(t, base, 10*time.Second),
	}).Solve(context.Background(), task)
	require.ErrorIs(t, err, vote.ErrTooManyErrors)
	assert.Equal(t, uint64(5), s.Stats().Requests, "MaxErrors tolerated, one more ends the step: no retry beyond")
}

func TestFaultsNeverChangeOtherReplies(t *testing.T) {
	t.Parallel()
	// The faults are drawn apart from the replies: with half the requests
	// faulted, every request that is answered gets the reply it gets from
	// a server without faults.
	cfg := hanoiConfig(mixed(13))
	_, clean := serve(t, cfg)
	cfg.Faults = simserver.Faults{RateLimit: 0.1, ServerError: 0.1, Garbage: 0.1, Truncate: 0.2}
	_, faulty := serve(t, cfg)
	a, b := client(t, clean, 10*time.Second), client(t, faulty, 10*time.Second)
	msgs := firstStep(t, 5)
	answered := 0
	for i := range 60 {
		got := call(t, b, msgs, llms.WithSeed(i+1))
		if got.Err {
			continue
		}
		answered++
		assert.Equal(t, call(t, a, msgs, llms.WithSeed(i+1)), got, "seed %d", i+1)
	}
	assert.InDelta(t, 30, answered, 12)
}

func TestPromptsCountTheirArrivalsApart(t *testing.T) {
	t.Parallel()
	// Requests with other prompts between them do not change a prompt's
	// replies: each prompt has its own arrival counter.
	cfg := hanoiConfig(mixed(17))
	x, y := firstStep(t, 4), firstStep(t, 5)
	_, a := serve(t, cfg)
	_, b := serve(t, cfg)
	ma, mb := client(t, a, 10*time.Second), client(t, b, 10*time.Second)
	for i := range 20 {
		want := call(t, ma, x)
		for range i % 3 {
			call(t, mb, y)
		}
		assert.Equal(t, want, call(t, mb, x), "request %d", i)
	}
}

func TestRedFlagRepliesStayText(t *testing.T) {
	t.Parallel()
	// An overlong reply ends with a tool intent (a wrong one), but it is a
	// red flag: it must reach the client as the text it is, not as a
	// native call that would hide its length.
	sp := findVersion(t)
	_, base := serve(t, simserver.Config{Oracle: spec.Oracle{Spec: sp}, Sim: sim.Config{Seed: 1, P: 1, FlagRate: 1, Flags: sim.FlagMix{Overlong: 1}}})
	m := client(t, base, 10*time.Second)
	for i := range 10 {
		r := call(t, m, spec.New(sp).Prompt(nil), llms.WithTools(specTools(sp)), llms.WithMaxTokens(100), llms.WithSeed(i+1))
		require.False(t, r.Err)
		assert.Empty(t, r.Calls)
		assert.Equal(t, "stop", r.Stop)
		assert.Contains(t, r.Text, `"tool_intent"`)
		assert.Greater(t, r.Compl, 100, "over the cap")
		v := inspect.Reply(maker.Reply{Text: r.Text, StopReason: r.Stop, OutputTokens: r.Compl}, 100, maker.FlagRules{}, nil)
		assert.Equal(t, "overlong", v.Flag)
	}
}

func TestClientGoneDuringLatency(t *testing.T) {
	s, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1, Latency: sim.FixedLatency(time.Hour)}))
	start := time.Now()
	r := call(t, client(t, base, 100*time.Millisecond), firstStep(t, 3))
	assert.True(t, r.Err)
	assert.Less(t, time.Since(start), 5*time.Second)
	require.Eventually(t, func() bool { return s.Stats().Unanswered >= 1 }, 20*time.Second, 5*time.Millisecond,
		"the handler stops waiting when its client leaves")
}

func TestClosedServerReleasesLaterHangsAtOnce(t *testing.T) {
	cfg := hanoiConfig(sim.Config{Seed: 1, P: 1})
	cfg.Faults = simserver.Faults{Hang: 1}
	s, base := serve(t, cfg)
	s.Close()
	s.Close() // idempotent
	start := time.Now()
	r := call(t, client(t, base, time.Minute), firstStep(t, 3))
	assert.True(t, r.Err, "closed without an answer")
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, uint64(1), s.Stats().Hangs)
}

// seeded sends each sample's index + 1 as the request's seed: what mdap's
// solver would do to make its runs against the server reproducible under
// parallel sampling (langchaingo omits a seed of 0).
func TestSolverSendingSampleIndexAsSeedIsScheduleIndependent(t *testing.T) {
	t.Parallel()
	cfg := hanoiConfig(sim.Config{Seed: 2, P: 0.8, WrongAnswers: 2, FlagRate: 0.1, ErrorRate: 0.05})
	type totals struct {
		Steps, Valid, Flagged, Errors int
		Flags                         map[string]int
		Winners                       []string
	}
	solve := func(parallel int) totals {
		_, base := serve(t, cfg)
		task, err := hanoi.New(4)
		require.NoError(t, err)
		var winners []string
		rep, err := (&maker.Solver{
			Config:   maker.Config{Vote: vote.Config{K: 3, Parallel: parallel, Backoff: time.Millisecond}},
			Model:    client(t, base, 10*time.Second), // the solver sends the sample's seed
			Progress: func(e maker.Event) { winners = append(winners, e.Record.Key) },
		}).Solve(context.Background(), task)
		require.NoError(t, err)
		return totals{rep.Steps, rep.Valid, rep.Flagged, rep.Errors, rep.Flags, winners}
	}
	sequential := solve(1)
	assert.Equal(t, sequential, solve(3), "the same winners, votes and totals, one sample at a time or three")
	assert.Positive(t, sequential.Flagged+sequential.Errors, "a varied run")
}
