package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryLogJSONEveryStderrLine: with --log-format json, every line the
// run writes on stderr is a JSON log record, the final error among them
// (with its exit status), for a run that fails and for bad usage.
func TestBinaryLogJSONEveryStderrLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"hanoi", "--disks", "3", "--p", "0.6", "--max-samples", "4", "--progress", "off", "--log-format", "json"}, 1},
		{[]string{"hanoi", "--disks", "3", "--k", "2", "--max-samples", "1", "--log-format", "json"}, 2},
	} {
		ch := start(t, nil, c.args...)
		require.Equal(t, c.code, ch.wait(t, time.Minute), ch.stderr.String())
		lines := strings.Split(strings.TrimSpace(ch.stderr.String()), "\n")
		require.NotEmpty(t, lines)
		for _, l := range lines {
			var rec map[string]any
			assert.NoError(t, json.Unmarshal([]byte(l), &rec), "a stderr line that is not a JSON record: %q", l)
		}
		var last map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last))
		assert.Equal(t, "ERROR", last["level"])
		assert.EqualValues(t, c.code, last["exit_status"])
		assert.True(t, strings.HasPrefix(last["msg"].(string), "maker: "), "%v", last)
	}
}
