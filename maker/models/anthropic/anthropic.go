// Package anthropic registers the anthropic: provider of maker/models:
// Anthropic's Messages API through langchaingo's Anthropic client, with
// its prompt cache (cacheLayout). Its server URL is the host root, as
// Anthropic's SDKs read ANTHROPIC_BASE_URL. Import it for its effect:
//
//	import _ "github.com/mdap-go/mdap/maker/models/anthropic"
package anthropic

import (
	"fmt"
	"strings"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
)

// DefaultURL is anthropic:'s server when neither
// models.Options.BaseURL nor the environment names one.
const DefaultURL = "https://api.anthropic.com"

// The environment variables an anthropic: model reads.
const (
	EnvKey = "ANTHROPIC_API_KEY"
	EnvURL = "ANTHROPIC_BASE_URL"
)

func init() { models.Register(provider) }

var provider = &models.Provider{
	Name:        "anthropic",
	DefaultURL:  DefaultURL,
	URLVars:     []string{EnvURL},
	APIRoot:     apiRoot,
	KeyVar:      EnvKey,
	Open:        open,
	URLHint:     "--base-url or " + EnvURL,
	AuthHint:    (*models.Conn).RefusedKey,
	NativeTools: true,
	// Anthropic's list prices (anthropic.com/pricing), checked
	// 2025-11-20, with its cache reads (0.1 times input) and 5-minute
	// cache writes (1.25 times input).
	Prices: map[string]maker.Price{
		"claude-opus-4-5":   {InputPerMillion: 5, OutputPerMillion: 25, CachedInputPerMillion: 0.5, CacheWritePerMillion: 6.25},
		"claude-opus-4-1":   {InputPerMillion: 15, OutputPerMillion: 75, CachedInputPerMillion: 1.5, CacheWritePerMillion: 18.75},
		"claude-opus-4":     {InputPerMillion: 15, OutputPerMillion: 75, CachedInputPerMillion: 1.5, CacheWritePerMillion: 18.75},
		"claude-sonnet-4-5": {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75},
		"claude-sonnet-4":   {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75},
		"claude-3-7-sonnet": {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75},
		"claude-3-5-sonnet": {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3, CacheWritePerMillion: 3.75},
		"claude-haiku-4-5":  {InputPerMillion: 1, OutputPerMillion: 5, CachedInputPerMillion: 0.1, CacheWritePerMillion: 1.25},
		"claude-3-5-haiku":  {InputPerMillion: 0.80, OutputPerMillion: 4, CachedInputPerMillion: 0.08, CacheWritePerMillion: 1.0},
		"claude-3-haiku":    {InputPerMillion: 0.25, OutputPerMillion: 1.25, CachedInputPerMillion: 0.025, CacheWritePerMillion: 0.3125},
	},
}

// mapper gives Anthropic's errors langchaingo's kinds.
var mapper = llms.AnthropicErrorMapper().Map

func open(c *models.Conn) error {
	if c.Key == "" {
		return fmt.Errorf("%w: anthropic:%s needs an API key: set %s", models.ErrSpec, c.Spec.Name, EnvKey)
	}
	llm, err := anthropic.New(anthropic.WithModel(c.Spec.Name), anthropic.WithToken(c.Key), anthropic.WithHTTPClient(c.HTTP), anthropic.WithBaseURL(c.Base))
	if err != nil {
		return fmt.Errorf("%w: %w", models.ErrSpec, err)
	}
	c.LLM, c.MapErr = llm, mapper
	minTokens := MinCacheTokens(c.Spec.Name)
	c.Layout = func(msgs []llms.MessageContent) []llms.MessageContent { return cacheLayout(msgs, minTokens) }
	return nil
}

// apiRoot is the URL langchaingo's Anthropic client adds
// "/messages" to, from a base URL given as Anthropic's own SDKs take
// ANTHROPIC_BASE_URL: the host root, to which they add "/v1/messages". A
// base already ending in /v1 (the API root, mdap's earlier form) is kept.
func apiRoot(base string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/v1") {
		return base
	}
	return base + "/v1"
}

// MinCacheTokens returns Anthropic's minimum cacheable prompt
// length for a model name, in tokens: a marked prefix shorter than this
// is processed without caching (no read discount, no write premium).
// As published by Anthropic (docs "Prompt caching", cache limitations):
// 4096 for Claude Opus 4.5 and Haiku 4.5, 2048 for the Claude 3 and 3.5
// Haikus, 1024 for the other Sonnets and Opuses. Cost: O(1).
func MinCacheTokens(name string) int {
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
// minTokens (MinCacheTokens). Below that a marker buys nothing,
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
