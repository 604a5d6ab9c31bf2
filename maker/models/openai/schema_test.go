package openai

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResponseFormatConversion(t *testing.T) {
	rf, err := responseFormat([]byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"description":"a count"},"tags":{"type":"array","items":{"type":"string"},"maxItems":3}},"required":["n","tags"],"additionalProperties":false}`))
	require.NoError(t, err)
	assert.True(t, rf.JSONSchema.Strict, "every property required")
	assert.Equal(t, "integer", rf.JSONSchema.Schema.Properties["n"].Type)
	assert.Equal(t, "a count", rf.JSONSchema.Schema.Properties["n"].Description)
	assert.Equal(t, "string", rf.JSONSchema.Schema.Properties["tags"].Items.Type)

	rf, err = responseFormat([]byte(`{"type":"object","properties":{"n":{"const":3}},"required":[]}`))
	require.NoError(t, err)
	assert.False(t, rf.JSONSchema.Strict, "not every property required")
	assert.Equal(t, []any{json.Number("3")}, rf.JSONSchema.Schema.Properties["n"].Enum)

	for _, bad := range []string{
		`{"anyOf":[{"type":"object"}]}`,
		`{"type":["object","null"]}`,
		`{"type":"object","additionalProperties":true}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"type":"array","items":{"type":"integer"}}`,
		`not json`,
	} {
		_, err := responseFormat([]byte(bad))
		assert.Error(t, err, bad)
	}
}
