package models_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/all"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPerModelEndpoint: each spec of an ensemble may name its own server
// and key variable; a key is never taken from the spec itself, an unset
// variable and a bad URL are refused naming the spec.
func TestPerModelEndpoint(t *testing.T) {
	cleanEnv(t)
	t.Setenv("TEAM_A_KEY", "sk-a")
	head, o, err := models.SplitEndpoint("openai:gpt-4.1-mini=1/2;base=http://127.0.0.1:9/v1;key=TEAM_A_KEY", models.Options{BaseURL: "http://other/v1"})
	require.NoError(t, err)
	assert.Equal(t, "openai:gpt-4.1-mini=1/2", head)
	assert.Equal(t, "http://127.0.0.1:9/v1", o.BaseURL)
	assert.Equal(t, "sk-a", o.APIKey)

	m, err := all.Open([]string{"openai:a;base=http://127.0.0.1:9/v1", "openai:b;base=http://127.0.0.1:10/v1"}, models.Options{})
	require.NoError(t, err)
	ms := m.(*maker.Ensemble).Members()
	assert.Equal(t, "openai:a@http://127.0.0.1:9/v1", maker.ModelIdentity(ms[0]))
	assert.Equal(t, "openai:b@http://127.0.0.1:10/v1", maker.ModelIdentity(ms[1]))

	for spec, want := range map[string]string{
		"openai:a;key=UNSET_VAR":               "UNSET_VAR is not set",
		"openai:a;key=sk-123":                  "must name an environment variable",
		"openai:a;base=notaurl":                "is not an http(s) URL",
		"openai:a;tpm=3":                       "unknown setting",
		"openai:a;base=http://x;base=http://y": "each once",
	} {
		_, err := models.Open(spec, models.Options{})
		assert.ErrorIs(t, err, models.ErrSpec, spec)
		assert.ErrorContains(t, err, want, spec)
		assert.Error(t, models.CheckSpec(spec), spec)
	}
	assert.NoError(t, models.CheckSpec("openai:a;base=http://127.0.0.1:9/v1"))
}
