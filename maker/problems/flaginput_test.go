package problems_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlagInputTakesAllFlagsOrNone: a family command's problem is its
// input flags, all of them (a string quoted, JSON as given) or none (the
// seeded problem of its size), and each refusal names the flags to give.
func TestFlagInputTakesAllFlagsOrNone(t *testing.T) {
	mul, err := problems.LookupBuiltin("multiply")
	require.NoError(t, err)
	in, err := mul.FlagInput(map[string]string{"a": "12", "b": "34"}, false, 1, 0)
	require.NoError(t, err)
	assert.JSONEq(t, `{"a": "12", "b": "34"}`, string(in))

	want, err := problems.Generate("multiply", 7, 3)
	require.NoError(t, err)
	in, err = mul.FlagInput(nil, true, 7, 3)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(in), "no input flag: the seeded problem of the size")

	_, err = mul.FlagInput(map[string]string{"a": "12"}, false, 1, 0)
	assert.EqualError(t, err, "give both --a and --b (or --digits N)")
	_, err = mul.FlagInput(map[string]string{"a": "12", "b": "34"}, true, 1, 3)
	assert.EqualError(t, err, "give --a and --b, or --digits, not both")
	_, err = mul.FlagInput(nil, true, 1, 0)
	assert.ErrorIs(t, err, decompose.ErrInput)
	assert.ErrorContains(t, err, "--digits: ")

	sorting, err := problems.LookupBuiltin("sort")
	require.NoError(t, err)
	in, err = sorting.FlagInput(map[string]string{"list": "[3, 1]"}, false, 1, 0)
	require.NoError(t, err)
	assert.JSONEq(t, `{"list": [3, 1]}`, string(in), "a JSON flag's value is JSON, not a string")
	_, err = sorting.FlagInput(map[string]string{"list": "[3,"}, false, 1, 0)
	assert.EqualError(t, err, `--list "[3," is not JSON: give a JSON list of integers such as '[3, 1, 2]'`)
}
