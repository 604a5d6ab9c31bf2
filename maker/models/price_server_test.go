package models

import (
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTableNeverPricesAnotherServer covers docs/models.md:95-97: "A model
// on another server (--base-url, OPENAI_BASE_URL) is never priced from the
// table." Each way of naming another server (the option, a spec's ;base=,
// OPENAI_BASE_URL, OPENAI_API_BASE, ANTHROPIC_BASE_URL) leaves a table
// model unpriced; at the provider's own API the same name has its list
// price.
func TestTableNeverPricesAnotherServer(t *testing.T) {
	const other = "http://127.0.0.1:8000/v1"
	price := func(spec string, o Options) maker.Price {
		m, err := Open(spec, o)
		require.NoError(t, err, spec)
		return m.(maker.Priced).Price()
	}
	for _, tc := range []struct {
		spec string
		env  map[string]string
		o    Options
	}{
		{"openai:gpt-4.1-mini", nil, Options{BaseURL: other}},
		{"openai:gpt-4.1-mini;base=" + other, nil, Options{}},
		{"openai:gpt-4.1-mini", map[string]string{EnvOpenAIURL: other}, Options{}},
		{"openai:gpt-4.1-mini", map[string]string{envOpenAIAPIBase: other}, Options{}},
		{"anthropic:claude-sonnet-4-5", map[string]string{EnvAnthropicURL: "http://127.0.0.1:8001/v1"}, Options{}},
		{"anthropic:claude-sonnet-4-5;base=http://127.0.0.1:8001/v1", nil, Options{}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv(EnvOpenAIKey, "sk-test")
			t.Setenv(EnvAnthropicKey, "sk-ant-test")
			name, _, _ := strings.Cut(tc.spec, ";")
			require.NotZero(t, price(name, Options{}).InputPerMillion, "the control: a list price at the provider's own API")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			assert.Equal(t, maker.Price{}, price(tc.spec, tc.o), "env %v, options %+v", tc.env, tc.o)
		})
	}
}
