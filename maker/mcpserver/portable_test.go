package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolSchemasArePortable: the tools' schemas, as tools/list gives
// them, pass the checks of strict clients (MCP Inspector's portability
// check in --strict mode, Inspector 2.12): no sub-schema is the bare true
// or says nothing but a description (its object spelling), and none has a
// list of types (a Go slice's ["null", "array"]): an input property is
// left out rather than null, and an output that may be null says so with
// anyOf branches of one type each.
func TestToolSchemasArePortable(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Config{})
	require.NoError(t, err)
	defer srv.Close()
	in := session(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var out lockedBuilder
	require.NoError(t, srv.ServeIO(context.Background(), io.NopCloser(strings.NewReader(in)), nopWC{&out}))
	var list struct {
		ID     int `json:"id"`
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if require.NoError(t, json.Unmarshal([]byte(line), &list)); list.ID == 2 {
			break
		}
	}
	require.NotEmpty(t, list.Result.Tools)
	var check func(tool, path string, s any, input bool)
	check = func(tool, path string, s any, input bool) {
		if b, ok := s.(bool); ok {
			assert.False(t, b, "%s %s: the bare schema true", tool, path)
			return
		}
		m, ok := s.(map[string]any)
		if !ok {
			return
		}
		if _, many := m["type"].([]any); many {
			assert.Fail(t, "a list of types", "%s %s: %v", tool, path, m["type"])
		}
		constrains := false
		for k := range m {
			switch k {
			case "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly":
			default:
				constrains = true
			}
		}
		assert.True(t, constrains, "%s %s: no validation keyword, the object spelling of the bare true: %v", tool, path, m)
		for k, v := range m {
			switch k {
			case "properties", "$defs":
				for name, sub := range v.(map[string]any) {
					check(tool, path+"."+name, sub, input)
				}
			case "items", "additionalProperties", "contains", "propertyNames":
				check(tool, path+"/"+k, v, input)
			case "anyOf", "oneOf", "allOf", "prefixItems":
				for _, sub := range v.([]any) {
					check(tool, path+"/"+k, sub, input)
				}
			}
		}
	}
	for _, tool := range list.Result.Tools {
		var inSchema, outSchema any
		require.NoError(t, json.Unmarshal(tool.InputSchema, &inSchema))
		check(tool.Name, "input", inSchema, true)
		if len(tool.OutputSchema) > 0 {
			require.NoError(t, json.Unmarshal(tool.OutputSchema, &outSchema))
			check(tool.Name, "output", outSchema, false)
		}
	}
}
