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

// jsonLines asserts that every line of s is a JSON log record and returns
// them.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		var rec map[string]any
		if assert.NoError(t, json.Unmarshal([]byte(l), &rec), "a stderr line that is not a JSON record: %q", l) {
			recs = append(recs, rec)
		}
	}
	return recs
}

// TestBinaryLogJSONNoticesAndFlagErrors: the lines written for the person
// at the terminal are records too under --log-format json: a generated
// token (printed once, unredacted, in its record), the --ui address, and
// the error of a flag cobra could not parse (the format flag is then read
// from the command line itself).
func TestBinaryLogJSONNoticesAndFlagErrors(t *testing.T) {
	t.Parallel()
	ch := start(t, nil, "hanoi", "--disks", "3", "--progress", "off", "--log-format", "json", "--no-such-flag")
	require.Equal(t, 2, ch.wait(t, time.Minute))
	recs := jsonLines(t, ch.stderr.String())
	require.NotEmpty(t, recs)
	assert.Contains(t, recs[len(recs)-1]["msg"], "unknown flag: --no-such-flag")

	ch = start(t, nil, "hanoi", "--disks", "3", "--progress", "off", "--log-format=json", "--ui", "127.0.0.1:0", "--latency", "1ms")
	require.Equal(t, 0, ch.wait(t, time.Minute), ch.stderr.String())
	recs = jsonLines(t, ch.stderr.String())
	var token, url string
	for _, r := range recs {
		if s, ok := r["token"].(string); ok {
			token = s
		}
		if s, ok := r["url"].(string); ok {
			url = s
		}
	}
	assert.Len(t, token, 64, "the generated token, whole: %v", recs)
	assert.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), "the view's address: %v", recs)

	_, stderr, cmd := startMCPHTTP(t, "--log-format", "json")
	require.Eventually(t, func() bool { return strings.Count(stderr.String(), "\n") >= 2 }, 30*time.Second, 50*time.Millisecond)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	token = ""
	for _, r := range jsonLines(t, stderr.String()) {
		if s, ok := r["token"].(string); ok {
			token = s
		}
	}
	assert.Len(t, token, 64, "maker mcp's generated token, whole, in its record")
}
