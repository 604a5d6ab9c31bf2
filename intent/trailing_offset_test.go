package intent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrailingDataErrorNamesWhereTheDataStarts: the byte offset of
// "unexpected data after the JSON value" is the first byte of that data,
// as the decoder before jsontext said, not the end of the next token.
func TestTrailingDataErrorNamesWhereTheDataStarts(t *testing.T) {
	for s, at := range map[string]int{
		`[1,2] [3]`:       6,
		`[1] 2`:           4,
		`{"a":1} {"b":2}`: 8,
		`[1] "abc"`:       4,
		`{"a":1}x`:        7,
		`[1,2]   xyz`:     8,
	} {
		_, err := decodeJSON(s)
		var se *syntaxError
		require.ErrorAs(t, err, &se, s)
		assert.Equal(t, at, se.off, "%q: %v", s, err)
	}
}
