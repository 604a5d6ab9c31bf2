package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// matchSpec writes a spec whose answer's city is declared "text" (or
// nothing) and three replies naming Paris in three surface forms.
func matchSpec(t *testing.T, annotation string) (spec string, replies []string) {
	t.Helper()
	dir := t.TempDir()
	spec = filepath.Join(dir, "city.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"name": "city", "system": "Name the capital.",
	  "answer": {"type": "object", "required": ["state"], "properties": {"state": {"type": "object",
	    "properties": {"city": {"type": "string"`+annotation+`}}}}}}`), 0o600))
	for i, city := range []string{"Paris", "paris.", " PARIS "} {
		p := filepath.Join(dir, []string{"a.txt", "b.txt", "c.txt"}[i])
		require.NoError(t, os.WriteFile(p, []byte(`{"state": {"city": "`+city+`"}, "done": true}`), 0o600))
		replies = append(replies, p)
	}
	return spec, replies
}

// TestBinaryParseUsesTheSpecsMatcher: maker parse --spec groups replies
// by the spec's declared matcher, as a run votes them; without the
// annotation the same replies are three answers.
func TestBinaryParseUsesTheSpecsMatcher(t *testing.T) {
	t.Parallel()
	spec, replies := matchSpec(t, `, "x-mdap-match": "text"`)
	c := start(t, nil, append([]string{"parse", "--spec", spec}, replies...)...)
	require.Equal(t, 0, c.wait(t, 30*time.Second), "stderr: %s", &c.stderr)
	out := c.stdout.String()
	assert.Regexp(t, `vote together \(key [0-9a-f]+\): \S*a.txt, \S*b.txt, \S*c.txt`, out)
	assert.Contains(t, out, "3 replies: 1 distinct answer, 0 red-flagged")

	spec, replies = matchSpec(t, "")
	code, out, stderr := cli(t, append([]string{"parse", "--spec", spec}, replies...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "3 replies: 3 distinct answers, 0 red-flagged")
}

// TestBadMatchAnnotationExit2: a bad x-mdap-match is bad input to parse
// and to run: exit 2, the field named, nothing printed on stdout.
func TestBadMatchAnnotationExit2(t *testing.T) {
	t.Parallel()
	spec, replies := matchSpec(t, `, "x-mdap-match": "fuzzy"`)
	for _, args := range [][]string{
		{"parse", "--spec", spec, replies[0]},
		{"run", spec, "--model", "sim"},
	} {
		code, out, stderr := cli(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.Contains(t, stderr, "/properties/state/properties/city/x-mdap-match", "%v", args)
		assert.Contains(t, stderr, `"fuzzy" is not a matcher`, "%v", args)
	}
}
