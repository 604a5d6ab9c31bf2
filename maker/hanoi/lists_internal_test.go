package hanoi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseList(t *testing.T) {
	for in, want := range map[string]any{
		"[]":                     []any{},
		" [ 1 ,0, 2 ] ":          []any{1, 0, 2},
		"[-3]":                   []any{-3},
		"[[3, 2], [], [1]]":      []any{[]any{3, 2}, []any{}, []any{1}},
		"[1.0, 1e0, 1234567890]": []any{json.Number("1.0"), json.Number("1e0"), json.Number("1234567890")},
		"[\n[1],\t[2]\r]":        []any{[]any{1}, []any{2}},
	} {
		got, err := parseList(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{
		"", "[", "]", "[1,]", "[,1]", "[1 2]", "[01]", "[1.]", "[.5]", "[1e]", "[+1]", "[-]",
		`["1"]`, "[null]", "[true]", "[{}]", "(1, 2)", "[[[1]]]", "[1] x", "[[1], (2)]",
	} {
		_, err := parseList(in)
		assert.Error(t, err, "%q", in)
	}
	v, end, err := parseListAt("move = [1, 0, 2] and more", 7)
	require.NoError(t, err)
	assert.Equal(t, []any{1, 0, 2}, v)
	assert.Equal(t, 16, end)
}

func TestLastAssign(t *testing.T) {
	for in, want := range map[string]int{
		"move = [":              7,
		"move=[":                5,
		"x move\t=\n[":          9,
		"move = [1] move = [2]": 18,
		"```move = [1]```":      10,
		"a move = [1] moves = [2] remove = [3] next_move = [4] move_x = [5] move = 3": 9,
	} {
		got, ok := lastAssign(in, "move")
		if assert.True(t, ok, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "move", "move =", "move = 3", "moves = [1]", "remove = [1]", "my_move = [1]", "Move = [1]"} {
		_, ok := lastAssign(in, "move")
		assert.False(t, ok, "%q", in)
	}
}
