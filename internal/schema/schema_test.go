package schema

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompile(t *testing.T) {
	sch, err := Compile("tools/read_file", []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`))
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(map[string]any{"n": json.Number("2")}))
	assert.Error(t, sch.Validate(map[string]any{"n": "2"}))
	assert.Error(t, sch.Validate(map[string]any{}))

	// Draft 2020-12 by default: prefixItems is a keyword.
	sch, err = Compile("d", []byte(`{"prefixItems":[{"type":"string"}]}`))
	require.NoError(t, err)
	assert.Error(t, sch.Validate([]any{json.Number("1")}))
}

func TestCompileErrors(t *testing.T) {
	for name, raw := range map[string]string{"empty": "", "blank": "  \n", "not json": `{"type":`, "two values": `{} {}`} {
		_, err := Compile("x", []byte(raw))
		assert.ErrorIs(t, err, ErrNotJSON, name)
	}
	for name, raw := range map[string]string{
		"bad type":     `{"type": 5}`,
		"external ref": `{"$ref": "https://example.com/schema.json"}`,
		"file ref":     `{"$ref": "file:///etc/passwd"}`,
		"relative ref": `{"$ref": "other.json"}`,
	} {
		_, err := Compile("tools/x", []byte(raw))
		require.ErrorIs(t, err, ErrInvalid, name)
		assert.NotErrorIs(t, err, ErrNotJSON, name)
	}
	_, err := Compile("x", []byte(`{"$ref": "file:///etc/passwd"}`))
	assert.Contains(t, err.Error(), "not allowed")
	// A local $ref resolves.
	_, err = Compile("x", []byte(`{"$defs":{"n":{"type":"integer"}},"$ref":"#/$defs/n"}`))
	assert.NoError(t, err)
}

func TestCompileConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := Compile("tools/same", []byte(`{"type":"object"}`))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
}
