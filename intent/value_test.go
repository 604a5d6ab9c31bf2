package intent_test

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/intent"
)

func TestDecodeValue(t *testing.T) {
	o := mustParse(t, `{"move":[1.0,0,2e0],"id":12345678901234567890,"p":0.1,"big":123456789012345678901234567890,"extra":true}`)
	var step struct {
		Move []int       `json:"move"`
		ID   uint64      `json:"id"`
		P    float64     `json:"p"`
		Big  json.Number `json:"big"`
	}
	require.NoError(t, o.DecodeValue(&step))
	assert.Equal(t, []int{1, 0, 2}, step.Move)
	assert.Equal(t, uint64(12345678901234567890), step.ID, "exact, never through float64")
	assert.Equal(t, 0.1, step.P)
	// Past 21 digits the canonical text has an exponent, still exact.
	assert.Equal(t, json.Number("1.2345678901234567890123456789e+29"), step.Big)
	exact, ok := new(big.Rat).SetString(step.Big.String())
	require.True(t, ok)
	assert.Equal(t, "123456789012345678901234567890", exact.FloatString(0))

	// Into interfaces, numbers stay json.Number: nothing is rounded.
	var m map[string]any
	require.NoError(t, o.DecodeValue(&m))
	assert.Equal(t, json.Number("12345678901234567890"), m["id"])
	assert.Equal(t, o.Value, m, "the same value Parse returned")
	var a any
	require.NoError(t, mustParse(t, `[9007199254740993]`).DecodeValue(&a))
	assert.Equal(t, []any{json.Number("9007199254740993")}, a)

	// Hand-built values are read as Key reads them.
	var moves []int
	require.NoError(t, intent.Output{Value: []any{int8(1), 2.0, json.Number("3e0")}}.DecodeValue(&moves))
	assert.Equal(t, []int{1, 2, 3}, moves)
	// Intent plays no part.
	var s struct{ Status string }
	require.NoError(t, mustParse(t, `{"Status":"ok","tool_intent":{"tool":"ls"}}`).DecodeValue(&s))
	assert.Equal(t, "ok", s.Status)
}

func TestDecodeValueErrors(t *testing.T) {
	var dst struct{ N int }
	for name, o := range map[string]intent.Output{
		"no value":   {Intent: &intent.ToolIntent{Tool: "ls"}},
		"nil map":    {Value: map[string]any(nil)},
		"JSON null":  {Value: json.RawMessage("null")},
		"zero value": {},
	} {
		err := o.DecodeValue(&dst)
		require.ErrorIs(t, err, intent.ErrNoAnswer, name)
		require.NotErrorIs(t, err, intent.ErrDecode, name)
	}

	err := intent.Output{Value: math.NaN()}.DecodeValue(&dst)
	require.ErrorIs(t, err, intent.ErrMalformed)

	err = mustParse(t, `{"N":"seven"}`).DecodeValue(&dst)
	require.ErrorIs(t, err, intent.ErrDecode)
	var typeErr *json.UnmarshalTypeError
	require.ErrorAs(t, err, &typeErr)
	assert.Equal(t, "N", typeErr.Field)

	// 1e21 and above are written with an exponent: not an integer for Go.
	err = mustParse(t, `{"N":1000000000000000000000}`).DecodeValue(&dst)
	require.ErrorIs(t, err, intent.ErrDecode)
	// Out of range for the field.
	var small struct{ N int8 }
	require.ErrorIs(t, mustParse(t, `{"N":300}`).DecodeValue(&small), intent.ErrDecode)

	// Not a pointer.
	err = mustParse(t, `{"N":1}`).DecodeValue(dst)
	require.ErrorIs(t, err, intent.ErrDecode)
	var invalid *json.InvalidUnmarshalError
	require.ErrorAs(t, err, &invalid)
	require.ErrorIs(t, mustParse(t, `{"N":1}`).DecodeValue(nil), intent.ErrDecode)
}
