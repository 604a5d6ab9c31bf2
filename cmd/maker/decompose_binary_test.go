package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decompJSON is what the tests read of maker multiply's and maker sort's
// --json summary.
type decompJSON struct {
	Solved      bool            `json:"solved"`
	Error       string          `json:"error"`
	Answer      json.RawMessage `json:"answer"`
	Correct     *bool           `json:"correct"`
	Samples     int             `json:"samples"`
	Cost        float64         `json:"cost"`
	Nodes       int             `json:"nodes"`
	Wrong       int             `json:"wrong"`
	Unprotected int             `json:"unprotected"`
	Resumed     int             `json:"resumed"`
	Roles       map[string]struct {
		K         int `json:"k"`
		Decisions int `json:"decisions"`
		Samples   int `json:"samples"`
	} `json:"roles"`
	Plan struct {
		Target float64        `json:"target"`
		K      map[string]int `json:"k"`
	} `json:"plan"`
}

func (c *child) decompSummary(t *testing.T) decompJSON {
	t.Helper()
	var s decompJSON
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s), "stdout %q stderr %q", c.stdout.String(), c.stderr.String())
	return s
}

func TestBinaryMultiplyAndSortJSON(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "multiply", "--a", "123456", "--b", "654321", "--json")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	s := c.decompSummary(t)
	assert.True(t, s.Solved)
	assert.JSONEq(t, `"80779853376"`, string(s.Answer), "the product as a decimal string")
	require.NotNil(t, s.Correct)
	assert.True(t, *s.Correct)
	assert.Positive(t, s.Samples)
	sum := 0
	for _, r := range []string{"atomic", "decompose", "solve", "compose"} {
		assert.Positive(t, s.Roles[r].Decisions, r)
		assert.Equal(t, s.Plan.K[r], s.Roles[r].K, "%s: the plan's k", r)
		sum += s.Roles[r].Samples
	}
	assert.Equal(t, s.Samples, sum, "the roles' samples add up to the total")

	c = start(t, nil, "sort", "--list", "[5, 3, 9, 1, 1, -4]", "--json", "--k", "solve=2")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	s = c.decompSummary(t)
	assert.True(t, s.Solved)
	assert.JSONEq(t, `[-4, 1, 1, 3, 5, 9]`, string(s.Answer))
	assert.Equal(t, 2, s.Roles["solve"].K, "--k solve=2 replaces the plan's k")

	// The seeded problems are the same for the same seed.
	a := start(t, nil, "sort", "--length", "30", "--seed", "4", "--json")
	b := start(t, nil, "sort", "--length", "30", "--seed", "4", "--json")
	require.Equal(t, 0, a.wait(t, time.Minute), a.stderr.String())
	require.Equal(t, 0, b.wait(t, time.Minute), b.stderr.String())
	assert.Equal(t, a.decompSummary(t), b.decompSummary(t))
}

// TestBinaryMultiplyWrongExits1 co-fails every node: the votes cannot
// protect it, the answer is wrong, and the run says so with exit 1.
func TestBinaryMultiplyWrongExits1(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "multiply", "--digits", "6", "--cofailure", "1", "--json")
	assert.Equal(t, 1, c.wait(t, time.Minute), c.stderr.String())
	s := c.decompSummary(t)
	assert.False(t, s.Solved)
	require.NotNil(t, s.Correct)
	assert.False(t, *s.Correct)
	assert.Positive(t, s.Unprotected, "co-failed decisions decided wrong are counted")
	assert.Contains(t, c.stderr.String(), "the answer is wrong")
}

func TestBinaryDecompositionBadInputExits2WritingNothing(t *testing.T) {
	t.Parallel()
	type usageRun struct {
		args []string
		dir  string // the folder of its --journal, which stays empty
		c    *child
	}
	var usage []usageRun
	for _, args := range [][]string{
		{"multiply", "--a", "12x4", "--b", "5"},
		{"multiply", "--a", "", "--b", "5"},
		{"multiply", "--a", "12"},
		{"multiply", "--digits", "10001"},
		{"multiply", "--digits", "0"},
		{"multiply", "--a", strings.Repeat("9", 10001), "--b", "2"},
		{"multiply", "--digits", "3", "--a", "1", "--b", "2"},
		{"multiply", "--digits", "3", "--p", "0.5"},
		{"multiply", "--digits", "3", "--target", "1"},
		{"multiply", "--digits", "3", "--k", "solver=3"},
		{"multiply", "--digits", "3", "--cofailure", "1.5"},
		{"multiply", "--digits", "3", "--strategy", "best"},
		{"multiply", "--digits", "3", "--model", "openai:x", "--rivals", "3"},
		{"multiply", "--digits", "3", "--resume"},
		{"sort", "--list", "[1, 2,"},
		{"sort", "--list", `["a"]`},
		{"sort", "--list", `[1.5]`},
		{"sort", "--list", `{"a": 1}`},
		{"sort", "--length", "-1"},
		{"sort", "--list", "[1]", "--length", "3"},
	} {
		usage = append(usage, usageRun{args: args, dir: t.TempDir()})
	}
	// The children are independent (a folder each): all start at once,
	// then each is checked.
	for i, u := range usage {
		usage[i].c = start(t, nil, append(u.args, "--journal", filepath.Join(u.dir, "j.jsonl"))...)
	}
	for _, u := range usage {
		args, c := u.args, u.c
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", args, c.stderr.String())
		assert.Empty(t, c.stdout.String(), "%v", args)
		assert.True(t, strings.HasPrefix(c.stderr.String(), "maker: "), "%v: %s", args, c.stderr.String())
		if slices.Contains(args, "--p") {
			assert.Contains(t, c.stderr.String(), "--p 0.5:", "the flag given is named, not a role it spreads to")
		}
		entries, err := os.ReadDir(u.dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "%v: nothing written", args)
	}

	// A journal of another problem is refused and left as it was.
	j := filepath.Join(t.TempDir(), "j.jsonl")
	c := start(t, nil, "multiply", "--digits", "3", "--journal", j)
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	before, err := os.ReadFile(j)
	require.NoError(t, err)
	for _, args := range [][]string{
		{"multiply", "--digits", "3", "--journal", j},                            // exists: no --resume
		{"multiply", "--digits", "4", "--journal", j, "--resume"},                // another problem
		{"multiply", "--digits", "3", "--journal", j, "--resume", "--p", "0.95"}, // other settings
	} {
		c := start(t, nil, args...)
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", args, c.stderr.String())
		assert.Empty(t, c.stdout.String())
	}
	after, err := os.ReadFile(j)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the journal is untouched")

	// Cut back to whole lines, the signed journal is refused (its chain
	// head is in the state folder), not resumed deciding the lost
	// decisions again; and left as it was.
	lines := strings.SplitAfter(string(before), "\n")
	cut := []byte(strings.Join(lines[:len(lines)/2], ""))
	require.NoError(t, os.WriteFile(j, cut, 0o600))
	c = start(t, nil, "multiply", "--digits", "3", "--journal", j, "--resume")
	assert.Equal(t, 2, c.wait(t, 30*time.Second), c.stderr.String())
	assert.Contains(t, c.stderr.String(), "cut back")
	after, err = os.ReadFile(j)
	require.NoError(t, err)
	assert.Equal(t, cut, after, "the cut journal is untouched")
}

// TestBinaryMultiplyKilledResumesToTheSameAnswer kills a 10×10 run with
// SIGKILL at random moments, and once with SIGINT (exit 130), resuming it
// each time: the last run gives the uninterrupted run's answer, samples,
// cost and per-role figures, with the journaled decisions read back.
func TestBinaryMultiplyKilledResumesToTheSameAnswer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"multiply", "--digits", "10", "--seed", "5", "--latency", "3ms", "--flag-rate", "0.02", "--json"}
	// The uninterrupted run, the plain child, runs while the killed ones
	// do (a journal of its own).
	ref := start(t, nil, append(args, "--journal", filepath.Join(dir, "whole.jsonl"))...)

	seed := uint64(time.Now().UnixNano())
	t.Logf("kill moments from seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	j := filepath.Join(dir, "killed.jsonl")
	signals := []syscall.Signal{syscall.SIGKILL, syscall.SIGKILL, syscall.SIGINT, syscall.SIGKILL}
	var got decompJSON
	for i := 0; ; i++ {
		a := append([]string(nil), append(args, "--journal", j)...)
		if i > 0 {
			a = append(a, "--resume")
		}
		lines := countLines(j)
		c := startRace(t, nil, a...)
		if i == len(signals) {
			require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
			got = c.decompSummary(t)
			break
		}
		more := 1 + rng.IntN(40)
		if !assert.Eventually(t, func() bool { return countLines(j) >= lines+more || c.exited() }, time.Minute, time.Millisecond) {
			t.Fatalf("run %d: the journal had %d lines after a minute, %d awaited; stderr:\n%s", i+1, countLines(j), lines+more, c.stderr.String())
		}
		require.False(t, c.exited(), "run %d ended before the signal; stderr:\n%s", i+1, c.stderr.String())
		require.NoError(t, c.cmd.Process.Signal(signals[i]))
		code := c.wait(t, time.Minute)
		if signals[i] == syscall.SIGINT {
			assert.Equal(t, 130, code, c.stderr.String())
			assert.Contains(t, c.stderr.String(), "--resume")
		} else {
			assert.NotEqual(t, 0, code, "killed before it finished")
		}
	}
	require.Equal(t, 0, ref.wait(t, 2*time.Minute), ref.stderr.String())
	want := ref.decompSummary(t)
	require.True(t, want.Solved)
	assert.True(t, got.Solved)
	assert.Equal(t, want.Answer, got.Answer)
	assert.Equal(t, want.Samples, got.Samples)
	assert.Equal(t, want.Cost, got.Cost)
	assert.Equal(t, want.Nodes, got.Nodes)
	assert.Equal(t, want.Roles, got.Roles)
	assert.Positive(t, got.Resumed, "decisions read back from the journal")
}

// TestBinarySolveDecompositionLinesSurviveAKill runs multiply and sort task
// lines through maker solve, kills the batch with SIGKILL while it runs,
// runs it again, and compares the result lines with an uninterrupted
// batch's: the same answers, checks and figures; a bad line is invalid
// (exit 1, the others still solved).
func TestBinarySolveDecompositionLinesSurviveAKill(t *testing.T) {
	t.Parallel()
	lines := `{"id": "m1", "multiply": {"a": "8318479021", "b": "2080249439"}}
{"id": "m2", "multiply": {"a": "123456", "b": "654321"}, "seed": 4, "k": 3}
{"id": "s1", "sort": {"list": [9, 4, 7, 1, 8, 2, 6, 3, 5, 0, 11, 10, -3]}}
{"id": "m3", "multiply": {"a": "9999999999", "b": "9999999999"}}
{"id": "bad", "multiply": {"a": "12x", "b": "3"}}
`
	run := func(t *testing.T, dir string, kill bool) map[string]map[string]any {
		tasks := filepath.Join(dir, "tasks.jsonl")
		require.NoError(t, os.WriteFile(tasks, []byte(lines), 0o644))
		out := filepath.Join(dir, "results.jsonl")
		args := []string{"solve", tasks, "--out", out, "--state", filepath.Join(dir, "state"), "--latency", "2ms", "--concurrency", "1", "--progress", "off"}
		if kill {
			c := startRace(t, nil, args...)
			require.Eventually(t, func() bool { return countLines(out) >= 2 || c.exited() }, time.Minute, time.Millisecond)
			require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL), "the batch ended before the kill")
			c.wait(t, time.Minute)
		}
		c := start(t, nil, args...)
		assert.Equal(t, 1, c.wait(t, 2*time.Minute), "one line is invalid: %s", c.stderr.String())
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		got := map[string]map[string]any{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &r), l)
			delete(r, "wall_seconds")
			_, dup := got[r["id"].(string)]
			assert.False(t, dup, "one result per task: %s", l)
			got[r["id"].(string)] = r
		}
		return got
	}
	// The uninterrupted batch and the killed one have folders of their
	// own and wait on the simulated latency: they run at once.
	var want, got map[string]map[string]any
	t.Run("batches", func(t *testing.T) {
		t.Run("uninterrupted", func(t *testing.T) {
			t.Parallel()
			want = run(t, t.TempDir(), false)
		})
		t.Run("killed", func(t *testing.T) {
			t.Parallel()
			got = run(t, t.TempDir(), true)
		})
	})
	require.Len(t, want, 5)
	assert.Equal(t, "17304511316768519219", want["m1"]["answer"])
	assert.Equal(t, "99999999980000000001", want["m3"]["answer"])
	assert.Equal(t, []any{-3.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0}, want["s1"]["answer"])
	for _, id := range []string{"m1", "m2", "m3", "s1"} {
		assert.Equal(t, "solved", want[id]["status"], id)
		assert.Equal(t, true, want[id]["correct"], id)
	}
	assert.Equal(t, "invalid", want["bad"]["status"])
	assert.Contains(t, want["bad"]["error"], "decimal digits")
	assert.Equal(t, want, got, "killed and run again: the uninterrupted batch's results")
}
