package toolcall

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArgumentsStringOrObject(t *testing.T) {
	for in, want := range map[string]string{
		`"{\"a\": 1}"`: `{"a": 1}`,
		`{"a": 1}`:     `{"a": 1}`,
		`null`:         ``,
		``:             ``,
		`""`:           ``,
		`7`:            `7`,
	} {
		assert.Equal(t, want, ArgumentsText(json.RawMessage(in)), "%s", in)
	}
}

func TestCallLLM(t *testing.T) {
	var c Call
	require.NoError(t, json.Unmarshal([]byte(`{"id":"c1","type":"function","function":{"name":"grep","arguments":{"pattern":"x"}}}`), &c))
	tc := c.LLM()
	assert.Equal(t, "c1", tc.ID)
	assert.Equal(t, "function", tc.Type)
	require.NotNil(t, tc.FunctionCall)
	assert.Equal(t, "grep", tc.FunctionCall.Name)
	assert.Equal(t, `{"pattern":"x"}`, tc.FunctionCall.Arguments)
	assert.Nil(t, Call{ID: "x"}.LLM().FunctionCall)
}
