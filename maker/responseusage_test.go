package maker_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/stretchr/testify/assert"
	"github.com/tmc/langchaingo/llms"
)

// TestResponseUsageCountsARequestOnce: OpenAI repeats a request's totals
// on every choice of an n > 1 reply; ResponseUsage counts them once, as
// the solver bills them (the GenAI span and the token counters read it).
// A provider that reports per choice is summed. (Checked by summing the
// repeated totals: the first case reports 90 output tokens.)
func TestResponseUsageCountsARequestOnce(t *testing.T) {
	info := func(in, out, cached int) map[string]any {
		return map[string]any{"PromptTokens": in, "CompletionTokens": out, "PromptCachedTokens": cached}
	}
	repeated := &llms.ContentResponse{Choices: []*llms.ContentChoice{
		{Content: "a", GenerationInfo: info(100, 30, 64)},
		{Content: "bb", GenerationInfo: info(100, 30, 64)},
		{Content: "ccc", GenerationInfo: info(100, 30, 64)},
	}}
	in, out, cached, ok := maker.ResponseUsage(repeated)
	assert.True(t, ok)
	assert.Equal(t, []int{100, 30, 64}, []int{in, out, cached})

	perChoice := &llms.ContentResponse{Choices: []*llms.ContentChoice{
		{Content: "a", GenerationInfo: info(100, 10, 0)},
		{Content: "b", GenerationInfo: info(100, 12, 0)},
	}}
	in, out, _, ok = maker.ResponseUsage(perChoice)
	assert.True(t, ok)
	assert.Equal(t, []int{100, 22}, []int{in, out})

	_, _, _, ok = maker.ResponseUsage(&llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "x"}}})
	assert.False(t, ok, "no counts reported")
	_, _, _, ok = maker.ResponseUsage(nil)
	assert.False(t, ok)
}

// TestResponseUsageReadsEveryProvidersNames: the names and number types
// providers report usage under. Anthropic's input tokens leave out its
// cache reads and writes, which are added (its CacheReadInputTokens marks
// it); of a figure's names the first that holds a number counts (an
// int32, int64 or float64 too, a string or nil not).
func TestResponseUsageReadsEveryProvidersNames(t *testing.T) {
	anthropic := &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "a", GenerationInfo: map[string]any{
		"InputTokens": int64(10), "CacheReadInputTokens": int32(200), "CacheCreationInputTokens": 30.0, "OutputTokens": 7}}}}
	in, out, cached, ok := maker.ResponseUsage(anthropic)
	assert.True(t, ok)
	assert.Equal(t, []int{240, 7, 200}, []int{in, out, cached})

	other := &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "a", GenerationInfo: map[string]any{
		"PromptTokens": "12", "input_tokens": 12, "InputTokens": 99, "CompletionTokens": nil, "output_tokens": 5, "cached_tokens": 4}}}}
	in, out, cached, ok = maker.ResponseUsage(other)
	assert.True(t, ok)
	assert.Equal(t, []int{12, 5, 4}, []int{in, out, cached})
}
