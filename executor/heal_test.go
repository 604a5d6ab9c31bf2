//go:build unix

package executor

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNestedHealing(t *testing.T) {
	schema := `{"type":"object","properties":{
	  "opts":{"type":"object","properties":{
	    "n":{"type":"integer"},
	    "ratio":{"type":["number","null"]},
	    "tags":{"type":"array","items":{"type":"object","properties":{"on":{"type":"boolean"}}}}
	  },"additionalProperties":false},
	  "extra":{"type":"object","additionalProperties":{"type":"integer"}}
	},"additionalProperties":false}`
	var got map[string]any
	tool := NewTool("nested", categories.TaskManager, "", json.RawMessage(schema), func(_ context.Context, a map[string]any) (string, error) {
		got = a
		return "ok", nil
	})
	e := newExec(t, WithTools(tool), WithPolicy(categories.Policy{Allow: []string{"nested"}}))
	obs := run(t, e, "nested", args{
		"opts":  `{"n":"3","ratio":"0.5","tags":"[{\"on\":\"true\"},{\"on\":false}]"}`,
		"extra": map[string]any{"a": "7"},
	})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, []string{
		"arguments.extra.a", "arguments.opts", "arguments.opts.n", "arguments.opts.ratio",
		"arguments.opts.tags", "arguments.opts.tags[0].on",
	}, obs.Healed)
	assert.Equal(t, map[string]any{
		"opts": map[string]any{
			"n": json.Number("3"), "ratio": json.Number("0.5"),
			"tags": []any{map[string]any{"on": true}, map[string]any{"on": false}},
		},
		"extra": map[string]any{"a": json.Number("7")},
	}, got, "the tool gets healed, decoded JSON with json.Number numbers")
}

func TestHealUnit(t *testing.T) {
	var doc any
	require.NoError(t, json.Unmarshal([]byte(`{"type":"object","properties":{"s":{"type":["string","array"]},"o":{"type":"object"},"b":{"type":"boolean"}}}`), &doc))
	v := map[string]any{"s": `["a"]`, "o": `{"k":1}`, "b": "false", "x": "[1]"}
	var healed []string
	heal(doc, v, "args", &healed)
	assert.Equal(t, `["a"]`, v["s"], "a type list with string keeps the string")
	assert.Equal(t, map[string]any{"k": json.Number("1")}, v["o"])
	assert.Equal(t, false, v["b"])
	assert.Equal(t, "[1]", v["x"], "no schema for x: left alone")
	assert.ElementsMatch(t, []string{"args.o", "args.b"}, healed)
}
