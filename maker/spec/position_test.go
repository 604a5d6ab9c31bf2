package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseErrorsSayLineAndColumn: a spec's JSON error names the line and
// column, so the fix is found without counting bytes.
func TestParseErrorsSayLineAndColumn(t *testing.T) {
	for _, c := range []struct {
		name, spec, want string
	}{
		{"syntax", "{\n  \"system\": \"x\",\n  \"answer\": {\"type\": \"object\"},,\n}", "line 3, column 32"},
		{"type", "{\n  \"system\": \"x\",\n  \"max_steps\": \"ten\"\n}", "line 3, column 21"},
		{"unknown field", "{\n  \"system\": \"x\",\n  \"sytem\": \"y\"\n}", "line 3, column 3"},
		{"unclosed", "{\n  \"system\": \"é\"", "line 2, column 16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.spec))
			require.ErrorIs(t, err, ErrSpec)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
