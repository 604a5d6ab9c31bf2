package maker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// refReplies is replies as it was written before readInfo: one lookup
// per key (refIntInfo), the reference the one-pass reader must match;
// the output tokens are shared out by the same apportion.
func refReplies(choices []*llms.ContentChoice, msgs []llms.MessageContent) []Reply {
	rs := make([]Reply, len(choices))
	first := choices[0].GenerationInfo
	in, okIn := refIntInfo(first, "PromptTokens", "input_tokens", "InputTokens")
	cacheRead, _ := refIntInfo(first, "PromptCachedTokens", "CacheReadInputTokens", "cached_tokens")
	cacheWrite, _ := refIntInfo(first, "CacheCreationInputTokens")
	if !okIn {
		in = promptTokens(msgs)
	}
	if _, anthropic := first["CacheReadInputTokens"]; anthropic {
		in += cacheRead + cacheWrite
	}
	outs := make([]int, len(choices))
	shared := len(choices) > 1
	okOut := true
	for i, c := range choices {
		o, ok := refIntInfo(c.GenerationInfo, "CompletionTokens", "output_tokens", "OutputTokens")
		okOut = okOut && ok
		outs[i] = o
		if i > 0 && o != outs[0] {
			shared = false
		}
	}
	apportion(outs, choices, okOut, shared)
	for i, c := range choices {
		rs[i] = Reply{Text: c.Content, ToolCalls: c.ToolCalls, StopReason: c.StopReason, OutputTokens: outs[i], Estimated: !okOut}
	}
	rs[0].InputTokens, rs[0].cachedIn, rs[0].cacheWrite, rs[0].requests = in, cacheRead, cacheWrite, 1
	return rs
}

func refIntInfo(info map[string]any, keys ...string) (int, bool) {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return v, true
		case int32:
			return int(v), true
		case int64:
			return int(v), true
		case float64:
			return int(v), true
		}
	}
	return 0, false
}

// TestRepliesReadUsageAsOneLookupPerKey: over random GenerationInfo maps
// (any subset of the keys replies reads, and others, each holding an int,
// int32, int64, float64, string, nil or bool), replies gives exactly the
// replies of a reader that looks each key up in order of preference.
func TestRepliesReadUsageAsOneLookupPerKey(t *testing.T) {
	keys := []string{"PromptTokens", "input_tokens", "InputTokens", "PromptCachedTokens", "CacheReadInputTokens",
		"cached_tokens", "CacheCreationInputTokens", "CompletionTokens", "output_tokens", "OutputTokens",
		"TotalTokens", "SimOutcome", "ReasoningTokens", "prompttokens"}
	rng := rand.New(rand.NewPCG(24, 5))
	value := func() any {
		n := rng.IntN(3000)
		switch rng.IntN(8) {
		case 0:
			return int32(n)
		case 1:
			return int64(n)
		case 2:
			return float64(n) + 0.75
		case 3:
			return fmt.Sprint(n)
		case 4:
			return nil
		case 5:
			return true
		}
		return n
	}
	info := func() map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			if rng.IntN(3) == 0 {
				m[k] = value()
			}
		}
		return m
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "a prompt of some length")}
	for range 20000 {
		choices := make([]*llms.ContentChoice, 1+rng.IntN(4))
		shared := info()
		for i := range choices {
			c := &llms.ContentChoice{Content: fmt.Sprint("reply ", rng.IntN(1e6)), StopReason: "stop", GenerationInfo: info()}
			if rng.IntN(2) == 0 {
				c.GenerationInfo = shared // OpenAI repeats the request's usage on every choice
			}
			choices[i] = c
		}
		want := refReplies(choices, msgs)
		got := replies(choices, msgs)
		require.True(t, slices.EqualFunc(want, got, func(a, b Reply) bool { return fmt.Sprint(a) == fmt.Sprint(b) }),
			"info %v:\nwant %+v\ngot  %+v", choices[0].GenerationInfo, want, got)
	}
}
