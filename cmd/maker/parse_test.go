package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/replyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const responses = "../../testdata/responses"

func TestBinaryParseShowsWhichRepliesVoteTogether(t *testing.T) {
	t.Parallel()
	files := []string{"native.json", "intent_fenced.txt", "intent_bare.txt", "good.txt", "empty.txt", "truncated.txt"}
	var args []string
	for _, f := range files {
		args = append(args, filepath.Join(responses, f))
	}
	c := start(t, nil, append([]string{"parse"}, args...)...)
	require.Equal(t, 0, c.wait(t, 30*time.Second), "stderr: %s", &c.stderr)
	out := c.stdout.String()
	assert.Regexp(t, `vote together \(key [0-9a-f]+\): \S*native.json, \S*intent_fenced.txt, \S*intent_bare.txt`, out)
	assert.Contains(t, out, `empty.txt: red flag "empty"`)
	assert.Contains(t, out, `truncated.txt: red flag "unparseable"`)
	assert.Contains(t, out, `"tool":"read_file"`)
	assert.Contains(t, out, "6 replies: 2 distinct answers, 2 red-flagged")

	c = start(t, nil, append([]string{"parse", "--json"}, args...)...)
	require.Equal(t, 0, c.wait(t, 30*time.Second))
	var lines []replyfile.Verdict
	sc := bufio.NewScanner(strings.NewReader(c.stdout.String()))
	for sc.Scan() {
		var l replyfile.Verdict
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		lines = append(lines, l)
	}
	require.Len(t, lines, len(files))
	assert.Equal(t, lines[0].Key, lines[1].Key)
	assert.NotEqual(t, lines[0].Key, lines[3].Key)
	assert.Equal(t, "empty", lines[4].Flag)
	assert.Empty(t, lines[4].Key)
	assert.JSONEq(t, `{"tool_intent":{"args":{"max_bytes":4096,"path":"notes/todo.txt"},"tool":"read_file"}}`, lines[0].Canonical)
}

func TestBinaryParseReadsStdin(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"move": [1, 0, 2], "next_state": [[2, 3], [], [1]]}`:                                        `"move":[1,0,2]`,
		`[{"id":"c","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"x\"}"}}]`: `"tool":"grep"`,
	} {
		cmd := exec.Command(binary, "parse", "--json")
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.Output()
		require.NoError(t, err)
		var l replyfile.Verdict
		require.NoError(t, json.Unmarshal(out, &l))
		assert.Equal(t, "-", l.File)
		assert.Contains(t, l.Canonical, want)
	}
}

func TestParseCapAndSpec(t *testing.T) {
	t.Parallel()
	overlong := filepath.Join(responses, "overlong.txt")
	code, out, _ := cli(t, "parse", overlong)
	require.Equal(t, 0, code)
	assert.Contains(t, out, `red flag "overlong"`)
	code, out, _ = cli(t, "parse", overlong, "--max-tokens", "100000")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "key ")

	// Against a spec's answer contract, a Towers of Hanoi answer is a
	// format red flag.
	code, out, _ = cli(t, "parse", filepath.Join(responses, "good.txt"), "--spec", specFile(t, "find-version.json"))
	require.Equal(t, 0, code)
	assert.Contains(t, out, `red flag "format"`)
}

func TestParseBadInputExit2PrintsNothing(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"parse", filepath.Join(responses, "good.txt"), "no/such/reply.txt"},
		{"parse", responses},
		{"parse", "--max-tokens", "0", filepath.Join(responses, "good.txt")},
		{"parse", "--spec", "no/such/spec.json", filepath.Join(responses, "good.txt")},
	} {
		code, out, stderr := cli(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Empty(t, out, "%v: nothing printed", args)
		assert.NotEmpty(t, stderr, "%v", args)
	}
}
