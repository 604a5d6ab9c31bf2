package models_test

import (
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/anthropic"
	"github.com/mdap-go/mdap/maker/models/openai"
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
	price := func(spec string, o models.Options) maker.Price {
		m, err := models.Open(spec, o)
		require.NoError(t, err, spec)
		return m.(maker.Priced).Price()
	}
	for _, tc := range []struct {
		spec string
		env  map[string]string
		o    models.Options
	}{
		{"openai:gpt-4.1-mini", nil, models.Options{BaseURL: other}},
		{"openai:gpt-4.1-mini;base=" + other, nil, models.Options{}},
		{"openai:gpt-4.1-mini", map[string]string{openai.EnvURL: other}, models.Options{}},
		{"openai:gpt-4.1-mini", map[string]string{"OPENAI_API_BASE": other}, models.Options{}},
		{"anthropic:claude-sonnet-4-5", map[string]string{anthropic.EnvURL: "http://127.0.0.1:8001/v1"}, models.Options{}},
		{"anthropic:claude-sonnet-4-5;base=http://127.0.0.1:8001/v1", nil, models.Options{}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv(openai.EnvKey, "sk-test")
			t.Setenv(anthropic.EnvKey, "sk-ant-test")
			name, _, _ := strings.Cut(tc.spec, ";")
			require.NotZero(t, price(name, models.Options{}).InputPerMillion, "the control: a list price at the provider's own API")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			assert.Equal(t, maker.Price{}, price(tc.spec, tc.o), "env %v, options %+v", tc.env, tc.o)
		})
	}
}
