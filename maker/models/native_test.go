package models

import (
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNativeToolsByProvider(t *testing.T) {
	for spec, want := range map[string]bool{
		"openai:m":    true,
		"anthropic:m": true,
		"ollama:m":    false,
	} {
		m, err := Open(spec, Options{BaseURL: "http://127.0.0.1:1", APIKey: "x"})
		require.NoError(t, err, spec)
		got, err := maker.DeclareAuto.Resolve(m)
		require.NoError(t, err)
		if want {
			assert.Equal(t, maker.DeclareNative, got, spec)
		} else {
			assert.Equal(t, maker.DeclarePrompt, got, spec)
		}
	}
}

func TestSpecNativeTools(t *testing.T) {
	for spec, want := range map[string]bool{"openai:gpt-4.1-mini": true, "anthropic:claude-sonnet-4-5=3/15": true, "ollama:qwen3": false, "sim": false} {
		sp, err := ParseSpec(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, want, sp.NativeTools(), spec)
	}
}

// TestEveryProviderIsComplete: a provider's file declares all that the
// package asks of it, and the help text names it.
func TestEveryProviderIsComplete(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			assert.Contains(t, Specs, p.name+":MODEL", "Specs names it")
			assert.NotEmpty(t, p.defaultURL)
			require.NoError(t, CheckBaseURL(p.name, p.defaultURL), "its default server passes its own check")
			assert.NotNil(t, p.open)
			assert.NotNil(t, p.authHint)
			assert.NotEmpty(t, p.urlHint)
			_, err := ParseSpec(p.name + ":m")
			require.NoError(t, err)
		})
	}
	assert.Equal(t, []string{"openai", "ollama", "anthropic"}, Providers())
}
