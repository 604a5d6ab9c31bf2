package models_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNativeToolsByProvider(t *testing.T) {
	for spec, want := range map[string]bool{
		"openai:m":    true,
		"anthropic:m": true,
		"ollama:m":    false,
	} {
		m, err := models.Open(spec, models.Options{BaseURL: "http://127.0.0.1:1", APIKey: "x"})
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
		sp, err := models.ParseSpec(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, want, sp.NativeTools(), spec)
	}
}

// TestEveryProviderIsComplete: a provider's package declares all that
// the package asks of it, and the help text names it.
func TestEveryProviderIsComplete(t *testing.T) {
	for _, name := range models.Providers() {
		p := models.ProviderNamed(name)
		t.Run(name, func(t *testing.T) {
			assert.Contains(t, models.Specs, p.Name+":MODEL", "Specs names it")
			assert.NotEmpty(t, p.DefaultURL)
			require.NoError(t, models.CheckBaseURL(p.Name, p.DefaultURL), "its default server passes its own check")
			assert.NotNil(t, p.Open)
			assert.NotNil(t, p.AuthHint)
			assert.NotEmpty(t, p.URLHint)
			_, err := models.ParseSpec(p.Name + ":m")
			require.NoError(t, err)
		})
	}
	assert.Equal(t, []string{"openai", "ollama", "anthropic"}, models.Providers())
}

// TestUnregisteredProviderNamesItsPackage: a program that imports
// maker/models without a provider's package gets an error that names the
// package to import, from every entry point that reads a spec; a name no
// package of mdap's provides is an unknown provider.
func TestUnregisteredProviderNamesItsPackage(t *testing.T) {
	defer models.Unregister("ollama")()
	assert.Equal(t, []string{"openai", "anthropic"}, models.Providers())
	want := `import _ "github.com/mdap-go/mdap/maker/models/ollama"`
	_, err := models.Open("ollama:tiny", models.Options{})
	require.ErrorIs(t, err, models.ErrSpec)
	assert.Contains(t, err.Error(), want)
	assert.Contains(t, models.CheckSpec("ollama:tiny;base=http://127.0.0.1:11434").Error(), want)
	_, _, err = models.BaseURL("ollama", "")
	require.ErrorIs(t, err, models.ErrSpec)
	assert.Contains(t, err.Error(), want)
	keys, urls := models.SecretVars()
	assert.NotContains(t, urls, "OLLAMA_HOST")
	assert.Contains(t, keys, "OPENAI_API_KEY")

	_, err = models.ParseSpec("mistral:large")
	require.ErrorIs(t, err, models.ErrSpec)
	assert.Contains(t, err.Error(), `unknown provider "mistral"`)
	assert.NotContains(t, err.Error(), "import")
}
