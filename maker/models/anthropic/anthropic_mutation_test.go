package anthropic

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// A system message after the task's own message is not static text: the
// prompt is sent as written. (Kills anthropic.go:49:13, human >= 0 to > 0,
// which took the rules after a first human message as the static part.)
func TestCacheLayoutSystemAfterTheTaskIsAsWritten(t *testing.T) {
	user := llms.TextParts(llms.ChatMessageTypeHuman, "step")
	sys := llms.TextParts(llms.ChatMessageTypeSystem, strings.Repeat("x", 4*1024))
	in := []llms.MessageContent{user, sys}
	assert.Equal(t, in, cacheLayout(in, 1024))
}

// "reaches three quarters of the minimum": a static part estimated at
// exactly 3/4 of it is marked. (Kills anthropic.go:65:79, < to <=.)
func TestCacheLayoutAtExactlyThreeQuarters(t *testing.T) {
	static := strings.Repeat("x", 3072) // EstimateTokens: 768 = 3/4 of 1024
	sys := llms.TextParts(llms.ChatMessageTypeSystem, static)
	user := llms.TextParts(llms.ChatMessageTypeHuman, "step")
	got := cacheLayout([]llms.MessageContent{sys, user}, 1024)
	require.Len(t, got, 1, "the rules moved into the task's message")
	_, marked := got[0].Parts[0].(llms.CachedContent)
	assert.True(t, marked)

	under := llms.TextParts(llms.ChatMessageTypeSystem, static[:3068]) // 767
	in := []llms.MessageContent{under, user}
	assert.Equal(t, in, cacheLayout(in, 1024), "one token under: as written")
}

// A task message with no parts of its own gets the marked rules alone.
// (Kills anthropic.go:79:53, len+1 to len-1: a negative capacity panics.)
func TestCacheLayoutTaskMessageWithoutParts(t *testing.T) {
	long := strings.Repeat("x", 4*1024)
	sys := llms.TextParts(llms.ChatMessageTypeSystem, long)
	user := llms.MessageContent{Role: llms.ChatMessageTypeHuman}
	got := cacheLayout([]llms.MessageContent{sys, user}, 1024)
	require.Len(t, got, 1)
	require.Len(t, got[0].Parts, 1)
	c, ok := got[0].Parts[0].(llms.CachedContent)
	require.True(t, ok)
	assert.Equal(t, llms.TextContent{Text: long}, c.ContentPart)
}
