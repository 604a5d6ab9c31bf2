package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// counterOracle answers prompts "question: N" with {"answer": N+1}; its
// wrong variant v is {"answer": N+2+v}, so all variants are distinct.
type counterOracle struct{}

func parseQuestion(prompt string) (int, error) {
	i := strings.LastIndex(prompt, "question: ")
	if i < 0 {
		return 0, errors.New("no question")
	}
	return strconv.Atoi(strings.TrimSpace(prompt[i+len("question: "):]))
}

func (counterOracle) Correct(q sim.Query) (string, error) {
	n, err := parseQuestion(q.Prompt)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`{"answer": %d}`, n+1), nil
}

func (counterOracle) Wrong(q sim.Query, variant int) (string, error) {
	n, err := parseQuestion(q.Prompt)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`{"answer": %d}`, n+2+variant), nil
}

// malformerOracle is a counterOracle that writes its own malformed replies.
type malformerOracle struct{ counterOracle }

func (malformerOracle) Malformed(_ sim.Query, variant int) (string, error) {
	return fmt.Sprintf("MALFORMED %d", variant%3), nil
}

func withID(step, index int) context.Context {
	return maker.WithSampleID(context.Background(), maker.SampleID{Step: step, Index: index})
}

func msgs(q int) []llms.MessageContent {
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You count."),
		llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprintf("question: %d", q)),
	}
}

func newModel(t testing.TB, o sim.Oracle, cfg sim.Config) *sim.Model {
	t.Helper()
	m, err := sim.New(o, cfg)
	require.NoError(t, err)
	return m
}

type result struct {
	text, stop, outcome string
	err                 error
}

func ask(m *sim.Model, ctx context.Context, q int, opts ...llms.CallOption) result {
	resp, err := m.GenerateContent(ctx, msgs(q), opts...)
	if err != nil {
		return result{err: err}
	}
	c := resp.Choices[0]
	return result{text: c.Content, stop: c.StopReason, outcome: c.GenerationInfo[sim.InfoOutcome].(string)}
}

func mixedConfig() sim.Config {
	return sim.Config{Seed: 42, P: 0.7, WrongAnswers: 5, FlagRate: 0.1, ErrorRate: 0.05}
}

func TestDeterministicWhateverTheSchedule(t *testing.T) {
	const steps, samples = 50, 20 // 1000 calls
	m1 := newModel(t, counterOracle{}, mixedConfig())
	m2 := newModel(t, counterOracle{}, mixedConfig())

	want := make([]result, steps*samples)
	for i := len(want) - 1; i >= 0; i-- { // sequential, reverse order
		want[i] = ask(m1, withID(i/samples, i%samples), i/samples)
	}
	got := make([]result, steps*samples)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = ask(m2, withID(i/samples, i%samples), i/samples) })
	}
	wg.Wait()

	outcomes := map[string]int{}
	for i := range want {
		assert.Equal(t, want[i].text, got[i].text, "call %d", i)
		assert.Equal(t, want[i].stop, got[i].stop, "call %d", i)
		assert.Equal(t, want[i].err == nil, got[i].err == nil, "call %d", i)
		outcomes[want[i].outcome]++
	}
	// The run really is mixed, so the comparison means something.
	for _, o := range []string{"correct", "wrong", "", "overlong", "cut_off", "malformed"} {
		assert.Positive(t, outcomes[o], "outcome %q never drawn", o)
	}

	// Another seed gives other replies.
	cfg := mixedConfig()
	cfg.Seed = 43
	m3 := newModel(t, counterOracle{}, cfg)
	differ := 0
	for i := range want {
		if r := ask(m3, withID(i/samples, i%samples), i/samples); r.text != want[i].text {
			differ++
		}
	}
	assert.Greater(t, differ, 100)
}

func TestRatesMatchConfig(t *testing.T) {
	cfg := sim.Config{Seed: 7, P: 0.9, WrongAnswers: 3, FlagRate: 0.05, ErrorRate: 0.02}
	m := newModel(t, counterOracle{}, cfg)
	const n = 40000
	counts := map[string]int{}
	errs := 0
	for i := range n {
		r := ask(m, withID(i/10, i%10), 3)
		if r.err != nil {
			require.ErrorIs(t, r.err, sim.ErrProvider)
			errs++
			continue
		}
		counts[r.outcome]++
	}
	valid := counts["correct"] + counts["wrong"]
	flags := counts["overlong"] + counts["cut_off"] + counts["malformed"]
	assert.InDelta(t, 0.9, float64(counts["correct"])/float64(valid), 0.01, "P among valid replies")
	assert.InDelta(t, 0.05, float64(flags)/n, 0.005, "flag rate")
	assert.InDelta(t, 0.02, float64(errs)/n, 0.004, "provider error rate")
	for _, k := range []string{"overlong", "cut_off", "malformed"} {
		assert.InDelta(t, 1.0/3, float64(counts[k])/float64(flags), 0.05, "flag kind %s", k)
	}
	assert.Equal(t, uint64(n), m.Calls())
}

func TestWrongMix(t *testing.T) {
	distinct := func(cfg sim.Config) map[string]int {
		cfg.P = 1e-12 // never right: every valid reply is wrong
		m := newModel(t, counterOracle{}, cfg)
		seen := map[string]int{}
		for i := range 6000 {
			r := ask(m, withID(0, i), 10)
			require.NoError(t, r.err)
			require.Equal(t, "wrong", r.outcome)
			seen[r.text]++
		}
		return seen
	}

	concentrated := distinct(sim.Config{P: 1e-12, WrongAnswers: 1})
	assert.Equal(t, map[string]int{`{"answer": 12}`: 6000}, concentrated, "concentrated: always variant 0")
	assert.Equal(t, concentrated, distinct(sim.Config{P: 1e-12}), "WrongAnswers 0 is concentrated too")
	assert.Equal(t, concentrated, distinct(sim.Config{P: 1e-12, WrongAnswers: 9, Concentration: 1}))

	spread := distinct(sim.Config{P: 1e-12, WrongAnswers: 5})
	require.Len(t, spread, 5)
	for v := range 5 {
		assert.InDelta(t, 1200, spread[fmt.Sprintf(`{"answer": %d}`, 12+v)], 150, "variant %d", v)
	}

	half := distinct(sim.Config{P: 1e-12, WrongAnswers: 4, Concentration: 0.5})
	require.Len(t, half, 4)
	assert.InDelta(t, 6000*(0.5+0.5/4), half[`{"answer": 12}`], 200)
}

func TestCoupledAcrossConfigs(t *testing.T) {
	// Raising P only turns wrong replies into correct ones; latency
	// changes no reply.
	low := newModel(t, counterOracle{}, sim.Config{Seed: 3, P: 0.5, WrongAnswers: 4})
	high := newModel(t, counterOracle{}, sim.Config{Seed: 3, P: 0.8, WrongAnswers: 4})
	slow := newModel(t, counterOracle{}, sim.Config{Seed: 3, P: 0.5, WrongAnswers: 4,
		Latency: sim.UniformLatency(0, time.Microsecond)})
	for i := range 500 {
		a, b, c := ask(low, withID(i, 0), 1), ask(high, withID(i, 0), 1), ask(slow, withID(i, 0), 1)
		if a.outcome == "correct" {
			assert.Equal(t, "correct", b.outcome)
		}
		if b.outcome == "wrong" {
			assert.Equal(t, a.text, b.text)
		}
		assert.Equal(t, a, c)
	}
}

func flagModel(t *testing.T, o sim.Oracle, mix sim.FlagMix) *sim.Model {
	return newModel(t, o, sim.Config{Seed: 1, P: 1, FlagRate: 1, Flags: mix})
}

func TestOverlong(t *testing.T) {
	m := flagModel(t, counterOracle{}, sim.FlagMix{Overlong: 1})
	for _, limit := range []int{0, 100, 2000} {
		for i := range 20 {
			var opts []llms.CallOption
			if limit > 0 {
				opts = append(opts, llms.WithMaxTokens(limit))
			}
			resp, err := m.GenerateContent(withID(i, 0), msgs(5), opts...)
			require.NoError(t, err)
			c := resp.Choices[0]
			cap := limit
			if cap == 0 {
				cap = maker.DefaultMaxTokens
			}
			assert.Equal(t, "stop", c.StopReason)
			assert.Equal(t, "overlong", c.GenerationInfo[sim.InfoOutcome])
			assert.Greater(t, c.GenerationInfo["CompletionTokens"], cap)
			assert.Equal(t, maker.EstimateTokens(c.Content), c.GenerationInfo["CompletionTokens"])
			assert.True(t, strings.HasSuffix(c.Content, "\n\n"+`{"answer": 7}`), "ends with the favourite wrong answer")
		}
	}
}

func TestCutOff(t *testing.T) {
	m := flagModel(t, counterOracle{}, sim.FlagMix{CutOff: 1})
	for _, limit := range []int{0, 3, 50} {
		var opts []llms.CallOption
		if limit > 0 {
			opts = append(opts, llms.WithMaxTokens(limit))
		}
		resp, err := m.GenerateContent(withID(0, 0), msgs(5), opts...)
		require.NoError(t, err)
		c := resp.Choices[0]
		cap := limit
		if cap == 0 {
			cap = maker.DefaultMaxTokens
		}
		assert.Equal(t, "length", c.StopReason)
		assert.Equal(t, "cut_off", c.GenerationInfo[sim.InfoOutcome])
		assert.Equal(t, cap, c.GenerationInfo["CompletionTokens"], "stopped at the cap")
		assert.Len(t, c.Content, 4*cap)
		assert.NotContains(t, c.Content, `{"answer": 6}`, "the answer is cut")
	}
	// The answer's first half is there when the cap leaves room for it.
	resp, err := m.GenerateContent(withID(0, 0), msgs(5))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(resp.Choices[0].Content, "\n"+`{"answe`), "ends with the answer's first 7 of 13 bytes")
}

func TestValidReplyCutAtProviderCap(t *testing.T) {
	m := newModel(t, counterOracle{}, sim.Config{P: 1})
	r := ask(m, withID(0, 0), 5, llms.WithMaxTokens(2))
	assert.Equal(t, result{text: `{"answer`, stop: "length", outcome: "cut_off"}, r)
	r = ask(m, withID(0, 0), 5, llms.WithMaxTokens(4))
	assert.Equal(t, result{text: `{"answer": 6}`, stop: "stop", outcome: "correct"}, r)
}

func TestMalformed(t *testing.T) {
	m := flagModel(t, counterOracle{}, sim.FlagMix{Malformed: 1})
	seen := map[string]bool{}
	for i := range 300 {
		r := ask(m, withID(i, 0), 5)
		require.NoError(t, r.err)
		assert.Equal(t, "stop", r.stop)
		assert.Equal(t, "malformed", r.outcome)
		assert.NotContains(t, r.text, `{"answer": 6}`)
		seen[r.text] = true
	}
	assert.Equal(t, map[string]bool{
		"I am not sure which step comes next. Let me think about it again before answering.": true,
		`{"answer": "the next step is`: true,
		`"answer": 6`:                  true,
	}, seen)

	m = flagModel(t, malformerOracle{}, sim.FlagMix{Malformed: 1})
	seen = map[string]bool{}
	for i := range 300 {
		seen[ask(m, withID(i, 0), 5).text] = true
	}
	assert.Equal(t, map[string]bool{"MALFORMED 0": true, "MALFORMED 1": true, "MALFORMED 2": true}, seen)
}

func TestUsageLikeOpenAI(t *testing.T) {
	m := newModel(t, counterOracle{}, sim.Config{P: 1})
	messages := msgs(41)
	resp, err := m.GenerateContent(withID(0, 0), messages)
	require.NoError(t, err)
	require.Len(t, resp.Choices, 1)
	info := resp.Choices[0].GenerationInfo
	prompt := sim.PromptText(messages)
	assert.Equal(t, "You count.\n\nquestion: 41", prompt)
	assert.Equal(t, (len(prompt)+3)/4, info["PromptTokens"])
	assert.Equal(t, 4, info["CompletionTokens"]) // {"answer": 42} is 14 bytes
	assert.Equal(t, (len(prompt)+3)/4+4, info["TotalTokens"])
	for _, k := range []string{"PromptTokens", "CompletionTokens", "TotalTokens"} {
		assert.IsType(t, 0, info[k], k)
	}
	assert.Equal(t, `{"answer": 42}`, resp.Choices[0].Content)
	assert.Equal(t, "stop", resp.Choices[0].StopReason)
	assert.Empty(t, resp.Choices[0].ToolCalls)
}

func TestLatencyHonoursContext(t *testing.T) {
	m := newModel(t, counterOracle{}, sim.Config{P: 1, Latency: sim.FixedLatency(time.Hour)})
	ctx, cancel := context.WithTimeout(withID(0, 0), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.GenerateContent(ctx, msgs(1))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second)

	ctx, cancel = context.WithCancel(withID(0, 0))
	cancel()
	_, err = newModel(t, counterOracle{}, sim.Config{P: 1}).GenerateContent(ctx, msgs(1))
	assert.ErrorIs(t, err, context.Canceled, "a done context fails even without latency")
}

func TestLatencyIsSlept(t *testing.T) {
	m := newModel(t, counterOracle{}, sim.Config{P: 1, Latency: sim.UniformLatency(30*time.Millisecond, 40*time.Millisecond)})
	start := time.Now()
	r := ask(m, withID(0, 0), 1)
	require.NoError(t, r.err)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
}

func TestUnknownPrompt(t *testing.T) {
	m := newModel(t, counterOracle{}, sim.DefaultConfig())
	_, err := m.GenerateContent(withID(0, 0), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hello")})
	assert.ErrorIs(t, err, sim.ErrUnknownPrompt)
	assert.ErrorContains(t, err, "no question")
}

func TestCall(t *testing.T) {
	m := newModel(t, counterOracle{}, sim.Config{P: 1})
	out, err := m.Call(context.Background(), "question: 9")
	require.NoError(t, err)
	assert.Equal(t, `{"answer": 10}`, out)
}

func TestWithoutSampleIdentity(t *testing.T) {
	// Sequential calls without identity are reproducible from a fresh model,
	// and successive calls of one prompt are not all the same draw.
	cfg := sim.Config{Seed: 5, P: 0.5, WrongAnswers: 3}
	run := func() []string {
		m, err := sim.New(counterOracle{}, cfg)
		require.NoError(t, err)
		var out []string
		for range 200 {
			r := ask(m, context.Background(), 2)
			require.NoError(t, r.err)
			out = append(out, r.text)
		}
		return out
	}
	a := run()
	assert.Equal(t, a, run())
	distinct := map[string]bool{}
	for _, s := range a {
		distinct[s] = true
	}
	assert.Len(t, distinct, 4)
}

func TestInvalidConfig(t *testing.T) {
	nan := math.NaN()
	for name, cfg := range map[string]sim.Config{
		"P above 1":           {P: 1.5},
		"P negative":          {P: -0.1},
		"P NaN":               {P: nan},
		"flag rate":           {P: 0.5, FlagRate: 2},
		"error rate":          {P: 0.5, ErrorRate: -1},
		"concentration":       {P: 0.5, Concentration: 1.1},
		"rates sum above 1":   {P: 0.5, FlagRate: 0.6, ErrorRate: 0.6},
		"negative wrong":      {P: 0.5, WrongAnswers: -1},
		"negative weight":     {P: 0.5, Flags: sim.FlagMix{CutOff: -1}},
		"infinite weight":     {P: 0.5, Flags: sim.FlagMix{Overlong: math.Inf(1)}},
		"negative fixed":      {P: 0.5, Latency: sim.FixedLatency(-time.Second)},
		"min above max":       {P: 0.5, Latency: sim.UniformLatency(2*time.Second, time.Second)},
		"lognormal no median": {P: 0.5, Latency: sim.LognormalLatency(0, 1)},
		"lognormal sigma":     {P: 0.5, Latency: sim.LognormalLatency(time.Second, -1)},
		"P zero":              {},
	} {
		_, err := sim.New(counterOracle{}, cfg)
		assert.ErrorIs(t, err, sim.ErrConfig, name)
		assert.ErrorIs(t, cfg.Validate(), sim.ErrConfig, name)
	}
	_, err := sim.New(nil, sim.DefaultConfig())
	assert.ErrorIs(t, err, sim.ErrConfig)
	err = sim.Config{}.Validate()
	require.ErrorIs(t, err, sim.ErrConfig, "a zero Config is refused: its model would never be right")
	assert.Contains(t, err.Error(), "set P")
	assert.NoError(t, sim.Config{P: 0.5, FlagRate: 0.5, ErrorRate: 0.5}.Validate())
}

func TestDefaultConfig(t *testing.T) {
	c := sim.DefaultConfig()
	assert.Equal(t, 0.9978, c.P)
	assert.Equal(t, 0.001, c.FlagRate)
	assert.Greater(t, c.WrongAnswers, 1, "spread")
	assert.NoError(t, c.Validate())
}

func ExampleNew() {
	cfg := sim.DefaultConfig()
	cfg.Seed = 1
	model, err := sim.New(counterOracle{}, cfg)
	if err != nil {
		panic(err)
	}
	// The solver puts each sample's identity in its call's context; the
	// model draws that sample's randomness from it.
	ctx := maker.WithSampleID(context.Background(), maker.SampleID{Step: 0, Index: 0})
	resp, err := model.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "question: 41"),
	}, llms.WithMaxTokens(750))
	if err != nil {
		panic(err)
	}
	c := resp.Choices[0]
	fmt.Println(c.Content, c.StopReason, c.GenerationInfo["CompletionTokens"])
	// Output: {"answer": 42} stop 4
}
