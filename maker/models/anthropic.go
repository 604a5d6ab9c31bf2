package models

import (
	"strings"

	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
)

// AnthropicMinCacheTokens returns Anthropic's minimum cacheable prompt
// length for a model name, in tokens: a marked prefix shorter than this
// is processed without caching (no read discount, no write premium).
// As published by Anthropic (docs "Prompt caching", cache limitations):
// 4096 for Claude Opus 4.5 and Haiku 4.5, 2048 for the Claude 3 and 3.5
// Haikus, 1024 for the other Sonnets and Opuses. Cost: O(1).
func AnthropicMinCacheTokens(name string) int {
	switch {
	case strings.Contains(name, "haiku-4"), strings.Contains(name, "opus-4-5"):
		return 4096
	case strings.Contains(name, "haiku"):
		return 2048
	}
	return 1024
}

// cacheLayout lays msgs out for Anthropic's prompt cache. langchaingo
// v0.1.14 drops a cache marker on a system message (handleSystemMessage
// unwraps llms.CachedContent) but sends one on a human message's part,
// so the static part of the prompt (the system messages' text, which the
// maker.Task contract keeps the same at every step) becomes the first
// part of the first human message, marked ephemeral, and the human
// message's own parts (the step's data) follow it unmarked. Anthropic
// caches the prefix up to and including a marked block (tools, system,
// then messages), so every later step reads the rules from the cache.
//
// The layout is used only when the static part can be cached: its
// estimated tokens (maker.EstimateTokens, four bytes a token, which
// undercounts Claude's tokenizer on English) reach three quarters of
// minTokens (AnthropicMinCacheTokens). Below that a marker buys nothing,
// and the prompt is sent as the task wrote it, the rules in the system
// role. msgs is not changed; the result shares its parts.
func cacheLayout(msgs []llms.MessageContent, minTokens int) []llms.MessageContent {
	var static strings.Builder
	human := -1
	for i, m := range msgs {
		switch m.Role {
		case llms.ChatMessageTypeSystem:
			if human >= 0 || len(m.Parts) == 0 {
				return msgs
			}
			// langchaingo sends each system message's first part,
			// joined with nothing between them: the same bytes.
			t, ok := m.Parts[0].(llms.TextContent)
			if !ok {
				return msgs
			}
			static.WriteString(t.Text)
		case llms.ChatMessageTypeHuman:
			if human < 0 {
				human = i
			}
		}
	}
	if human < 0 || static.Len() == 0 || 4*maker.EstimateTokens(static.String()) < 3*minTokens {
		return msgs
	}
	for _, p := range msgs[human].Parts {
		if _, marked := p.(llms.CachedContent); marked {
			return msgs // the task marked its own static part
		}
	}
	out := make([]llms.MessageContent, 0, len(msgs))
	for i, m := range msgs {
		switch {
		case m.Role == llms.ChatMessageTypeSystem:
			continue
		case i == human:
			parts := make([]llms.ContentPart, 0, len(m.Parts)+1)
			parts = append(parts, llms.WithCacheControl(llms.TextContent{Text: static.String()}, anthropic.EphemeralCache()))
			m.Parts = append(parts, m.Parts...)
		}
		out = append(out, m)
	}
	return out
}
