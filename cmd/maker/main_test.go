package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cli runs the CLI in-process and returns its exit status and outputs.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// childCLI is cli run as the plain maker binary, a child process (start):
// for calibrations, whose plan is seconds of arithmetic race-built in
// process and a fraction of that in the child. What they show is the
// command's output, the same either way; calibrate.Run's concurrency is
// race-built in maker/calibrate's tests.
func childCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	c := start(t, nil, args...)
	code := c.wait(t, 5*time.Minute)
	return code, c.stdout.String(), c.stderr.String()
}

func hanoiJSON(t *testing.T, args ...string) (int, hanoiSummary) {
	t.Helper()
	code, out, errOut := cli(t, append([]string{"hanoi", "--json", "--progress", "off"}, args...)...)
	var s hanoiSummary
	require.NoError(t, json.Unmarshal([]byte(out), &s), "stdout %q stderr %q", out, errOut)
	return code, s
}

func TestHanoiTenDisksZeroErrors(t *testing.T) {
	t.Parallel()
	for _, seed := range []string{"1", "2", "3", "4"} {
		code, s := hanoiJSON(t, "--disks", "10", "--p", "0.99", "--k", "3", "--seed", seed)
		assert.Equal(t, 0, code, "seed %s: %+v", seed, s)
		assert.True(t, s.Solved, "seed %s", seed)
		assert.Zero(t, s.WrongSteps, "seed %s", seed)
		assert.Equal(t, 1023, s.Steps)
		assert.GreaterOrEqual(t, s.SamplesPerStep, 3.0)
	}
}

func TestHanoiK1MakesWrongMoves(t *testing.T) {
	t.Parallel()
	// With p = 0.99 and 1,023 steps, a run without voting expects about ten
	// wrong moves: voting is what removes them.
	wrongRuns := 0
	for seed := 1; seed <= 5; seed++ {
		code, s := hanoiJSON(t, "--disks", "10", "--p", "0.99", "--k", "1", "--seed", fmt.Sprint(seed))
		if s.WrongSteps > 0 {
			wrongRuns++
			assert.False(t, s.Solved)
			assert.Equal(t, 1, code, "an unsolved run exits 1")
		}
	}
	assert.GreaterOrEqual(t, wrongRuns, 4, "k=1 should make wrong moves for most seeds")
}

// decided reads the journal's step records: what must not depend on the
// schedule (winner, key, votes, valid and flagged counts).
func decided(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Step    *int            `json:"step"`
			Winner  json.RawMessage `json:"winner"`
			Key     string          `json:"key"`
			Votes   map[string]int  `json:"votes"`
			Valid   int             `json:"valid"`
			Flagged int             `json:"flagged"`
			Flags   map[string]int  `json:"flags"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Step == nil {
			continue
		}
		b, _ := json.Marshal(r)
		out = append(out, string(b))
	}
	require.NoError(t, sc.Err())
	return out
}

func TestHanoiSameSeedSameRunWhateverParallel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var runs [][]string
	var sums []hanoiSummary
	for _, par := range []string{"1", "3"} {
		j := filepath.Join(dir, "p"+par+".jsonl")
		code, s := hanoiJSON(t, "--disks", "10", "--p", "0.9", "--flag-rate", "0.05", "--k", "3", "--seed", "11", "--parallel", par, "--journal", j)
		require.Equal(t, 0, code)
		runs = append(runs, decided(t, j))
		sums = append(sums, s)
	}
	require.Len(t, runs[0], 1023)
	assert.Equal(t, runs[0], runs[1], "winners, keys and votes must not depend on --parallel")
	assert.Equal(t, sums[0].Steps, sums[1].Steps)
	assert.Equal(t, sums[0].Valid, sums[1].Valid)
	assert.Equal(t, sums[0].Flagged, sums[1].Flagged)
	assert.Equal(t, sums[0].Flags, sums[1].Flags)
}

func TestHanoiResumeAfterCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full := filepath.Join(dir, "full.jsonl")
	args := []string{"--disks", "8", "--p", "0.95", "--flag-rate", "0.02", "--seed", "5"}
	code, whole := hanoiJSON(t, append(args, "--journal", full)...)
	require.Equal(t, 0, code)

	lines := strings.SplitAfter(string(mustRead(t, full)), "\n")
	for _, keep := range []int{1, 40, 200} { // header plus keep-1 steps, then a torn line
		crashed := filepath.Join(dir, fmt.Sprintf("crash-%d.jsonl", keep))
		torn := strings.Join(lines[:keep], "") + lines[keep][:len(lines[keep])/2]
		require.NoError(t, os.WriteFile(crashed, []byte(torn), 0o644))
		asCrashed(t, crashed)
		code, out, stderr := cli(t, append(append([]string{"hanoi"}, args...), "--json", "--progress", "off", "--journal", crashed, "--resume", "--parallel", "2")...)
		var s hanoiSummary
		require.NoError(t, json.Unmarshal([]byte(out), &s))
		assert.Contains(t, stderr, "ends with a torn line", "the dropped line is said on stderr")
		require.Equal(t, 0, code)
		assert.Equal(t, keep-1, s.Resumed)
		assert.True(t, s.Solved)
		assert.Equal(t, whole.Steps, s.Steps)
		assert.Equal(t, whole.Valid, s.Valid)
		assert.Equal(t, whole.Flagged, s.Flagged)
		assert.Equal(t, whole.OutputTokens, s.OutputTokens)
		assert.Equal(t, decided(t, full), decided(t, crashed), "the resumed journal is the uninterrupted one, no step twice")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "j.jsonl")
	code, _, _ := cli(t, "hanoi", "--disks", "3", "--journal", existing, "--progress", "off")
	require.Equal(t, 0, code)
	before := mustRead(t, existing)

	for _, args := range [][]string{
		{"hanoi", "--disks", "0"},
		{"hanoi", "--disks", "31"},
		{"hanoi", "--disks", "ten"},
		{"hanoi", "--k", "0"},
		{"hanoi", "--p", "1.5"},
		{"hanoi", "--resume"},
		{"hanoi", "--model", "gpt4"},
		{"hanoi", "--progress", "maybe"},
		{"hanoi", "--disks", "3", "--journal", existing},             // would overwrite
		{"hanoi", "--disks", "4", "--journal", existing, "--resume"}, // another task
		{"hanoi", "--disks", "3", "--journal", existing, "--resume", "--seed", "9"}, // other settings
		{"hanoi", "extra"},
		{"nosuchcommand"},
		{"kmin", "--p", "0.4"},
		{"tools", "--tools", "shell"},
		{"hanoi", "--parallel", "100000"},
		{"hanoi", "--max-samples", "2"},
		{"hanoi", "--timeout", "-1s"},
		{"hanoi", "--timeout", "0s"},
		{"hanoi", "--latency", "-5ms"},
		{"hanoi", "--latency", "1ms", "--latency-sigma", "NaN"},
		{"hanoi", "--latency-sigma", "0.5"},
		{"hanoi", "--base-url", "127.0.0.1:11434", "--model", "ollama:tiny"},
		{"hanoi", "--base-url", "ftp://host/v1", "--model", "openai:x"},
		{"hanoi", "--base-url", "http://", "--model", "openai:x"},
		{"hanoi", "--journal", ""},
		{"hanoi", "--journal", "/dev/null"},
		{"hanoi", "--journal", dir},
		{"hanoi", "--rerun-pending"},
		{"hanoi", "--journal", existing, "--rerun-pending"},
		{"hanoi", "--model", "openai:gpt-4o-mini", "--base-url", "http://127.0.0.1:1/v1", "--seed", "3"},
		{"hanoi", "--model", "ollama:tiny", "--p", "0.5"},
		{"hanoi", "--flag-rate", "0.7", "--error-rate", "0.7"},
		{"hanoi", "--wrong-answers", "0"},
		{"hanoi", "--p", "0"},
	} {
		code, _, stderr := cli(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.NotEmpty(t, stderr, "%v must say what was wrong", args)
	}
	assert.Equal(t, before, mustRead(t, existing), "a refused run must not touch the journal")
}

func TestUsageErrorsNameTheFlagAndRange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"hanoi", "--p", "1.5"}, []string{"--p 1.5", "above 0, up to 1"}},
		{[]string{"hanoi", "--disks", "31"}, []string{"maker: --disks 31: use 1 to 30\n"}}, // as maker calibrate says it: hanoi.New's field error
		{[]string{"hanoi", "--parallel", "100000"}, []string{"--parallel 100000", "use 1 to --k (3)"}},
		{[]string{"hanoi", "--k", "65537"}, []string{`"65537" for "--k" flag`, "from 1 to 1000"}},
		{[]string{"hanoi", "--max-samples", "2"}, []string{"--max-samples 2", "at least --k (3)"}},
		{[]string{"hanoi", "--max-tokens", "0"}, []string{"--max-tokens 0: use a positive value, or leave the flag out for 750"}},
		{[]string{"hanoi", "--max-tokens", "2000000"}, []string{"--max-tokens 2000000: use 1 to 1048576"}},
		{[]string{"hanoi", "--max-errors", "-1"}, []string{"--max-errors -1: use 0 (none tolerated) or more"}},
		{[]string{"hanoi", "--model", "ollama:x", "--seed", "2"}, []string{"--seed applies to --model sim only"}},
		{[]string{"hanoi", "--difficulty-spread", "1"}, []string{"--difficulty-spread 1", "up to but not including 1"}},
		{[]string{"hanoi", "--difficulty-spread", "-0.5"}, []string{"--difficulty-spread -0.5"}},
		{[]string{"hanoi", "--hard-agree", "2"}, []string{"--hard-agree 2", "probability 0 to 1"}},
		{[]string{"hanoi", "--model", "ollama:x", "--hard-agree", "0.5"}, []string{"--hard-agree applies to --model sim only"}},
		{[]string{"serve-sim", "--difficulty-spread", "NaN"}, []string{"--difficulty-spread NaN"}},
		{[]string{"hanoi", "--base-url", "localhost:11434", "--model", "ollama:x"}, []string{"--base-url", "scheme must be http or https"}},
		{[]string{"kmin", "--target", "0"}, []string{"maker: --steps, --p or --target: vote: KMin: target 0, want 0 < target < 1"}},
		{[]string{"kmin", "--target", "1"}, []string{"maker: --steps, --p or --target: vote: KMin: target 1, want 0 < target < 1"}},
		{[]string{"kmin", "--valid-rate", "0"}, []string{"maker: --valid-rate or --price: vote: ExpectedCost: valid rate 0, want 0 < rate <= 1"}},
		{[]string{"kmin", "--p", "0.4"}, []string{"maker: --steps, --p or --target: vote: KMin: p 0.4, want 1/2 < p <= 1"}},
		{[]string{"kmin", "--steps", "0"}, []string{"maker: --steps, --p or --target: vote: KMin: steps 0, want at least 1"}},
		{[]string{"kmin", "--price", "-1"}, []string{"maker: --valid-rate or --price: vote: ExpectedCost: price -1, want a finite price >= 0"}},
	} {
		code, _, stderr := cli(t, c.args...)
		require.Equal(t, 2, code, "%v", c.args)
		for _, w := range c.want {
			assert.Contains(t, stderr, w, "%v", c.args)
		}
		assert.NotContains(t, stderr, "{K:", "no Go struct dumps")
	}
}

// TestKFrom1To1000: README.md's run flags say --k is "1 to 1000": both ends
// run (a one-step Hanoi at p 1, so k = 1000 is 1000 samples) and one past
// each end is refused, naming the range.
func TestKFrom1To1000(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"1", "1000"} {
		code, s := hanoiJSON(t, "--disks", "1", "--p", "1", "--k", k)
		assert.Equal(t, 0, code, "--k %s", k)
		assert.True(t, s.Solved, "--k %s", k)
		assert.GreaterOrEqual(t, s.Valid, s.Steps*mustAtoi(t, k), "--k %s: a lead of k valid votes", k)
	}
	for _, k := range []string{"0", "1001"} {
		code, out, stderr := cli(t, "hanoi", "--disks", "1", "--k", k)
		assert.Equal(t, 2, code, "--k %s", k)
		assert.Contains(t, stderr, `invalid argument "`+k+`" for "--k" flag: want a margin from 1 to 1000`, "--k %s", k)
		assert.Empty(t, out)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

func TestNoJournalLeftByARefusedRun(t *testing.T) {
	t.Parallel()
	j := filepath.Join(t.TempDir(), "j.jsonl")
	code, _, _ := cli(t, "hanoi", "--k", "65537", "--journal", j)
	require.Equal(t, 2, code)
	assert.NoFileExists(t, j, "a refused run writes nothing")
}

func TestKMinPaperTable(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]int{"0.9978": 3, "0.6429": 29} {
		code, out, _ := cli(t, "kmin", "--steps", "1048575", "--p", p, "--target", "0.95", "--json")
		require.Equal(t, 0, code)
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		assert.EqualValues(t, want, r["k_min"], "p=%s", p)
		assert.GreaterOrEqual(t, r["p_full"], 0.95)
	}
}

func TestToolsReport(t *testing.T) {
	t.Parallel()
	code, out, _ := cli(t, "tools", "--root", t.TempDir())
	require.Equal(t, 0, code)
	assert.Contains(t, out, "file_write")
	assert.Contains(t, out, "not-loaded-here")
	assert.Contains(t, out, "list_tool_categories")
	states := func(sel string) map[string]string {
		code, out, _ := cli(t, "tools", "--tools", sel, "--json", "--root", t.TempDir())
		require.Equal(t, 0, code)
		var inv struct {
			Categories []struct{ Category, State string } `json:"categories"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &inv), out)
		m := map[string]string{}
		for _, c := range inv.Categories {
			m[c.Category] = c.State
		}
		return m
	}
	// write_file loaded, edit_file not built: the category is loaded.
	assert.Equal(t, "loaded", states("read_only,write_file")["file_write"])
	assert.Equal(t, "loaded", states("read_only,file_write")["file_write"])
	assert.Equal(t, "partly-loaded", states("read_only,-grep")["search"], "glob loaded, grep withheld")
}

func TestKMinPOne(t *testing.T) {
	t.Parallel()
	code, out, stderr := cli(t, "kmin", "--p", "1", "--json")
	require.Equal(t, 0, code, stderr)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.EqualValues(t, 1, r["k_min"])
}

// TestKMinPriceWhoseCostOverflowsNamesThePrice: a --price whose cost
// overflows a float64 (no JSON can say +Inf, and no text should) is a
// usage error naming --price, with or without --json.
func TestKMinPriceWhoseCostOverflowsNamesThePrice(t *testing.T) {
	t.Parallel()
	for _, json := range []string{"--json=true", "--json=false"} {
		code, out, errOut := cli(t, "kmin", json, "--price", "1e305")
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.True(t, strings.HasPrefix(errOut, "maker: --price 1e+305: the task's cost"), errOut)
	}
}

// TestWriteJSONEncodingErrorIsAFailure: a value --json output cannot say
// fails the command (exit 1), not a usage error (exit 2) naming no flag.
func TestWriteJSONEncodingErrorIsAFailure(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := writeJSON(&out, map[string]float64{"cost": math.Inf(1)})
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitFailed, ee.code)
	assert.Empty(t, out.String(), "nothing half-written")
}

// brokenWriter fails every write, as a closed pipe or a full disk does.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestSummaryOutputLostIsAFailure: a command whose --json report (or
// text summary) cannot be written fails (exit 1) by itself, not only
// through run's checkedWriter.
func TestSummaryOutputLostIsAFailure(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"hanoi", "--disks", "2", "--json", "--progress", "off"},
		{"bench", "--quick", "--suite", "matching", "--json", "--progress", "off", "--out", t.TempDir()}, // the quickest suite
		{"bench", "--quick", "--suite", "matching", "--progress", "off", "--out", t.TempDir()},
	} {
		root := newRoot()
		root.SetArgs(args)
		root.SetOut(brokenWriter{})
		root.SetErr(&bytes.Buffer{})
		err := root.ExecuteContext(context.Background())
		var ee *exitError
		require.ErrorAs(t, err, &ee, "%v", args)
		assert.Equal(t, exitFailed, ee.code, "%v: %v", args, err)
		assert.ErrorContains(t, err, "no space left", "%v", args)
	}
}

func TestRefusedJournalPrintsNoSummary(t *testing.T) {
	t.Parallel()
	j := filepath.Join(t.TempDir(), "j.jsonl")
	code, _, _ := cli(t, "hanoi", "--disks", "2", "--journal", j, "--progress", "off")
	require.Equal(t, 0, code)
	code, out, stderr := cli(t, "hanoi", "--disks", "2", "--journal", j, "--resume", "--k", "5", "--json", "--progress", "off")
	assert.Equal(t, 2, code)
	assert.Empty(t, out, "a refused run has no summary")
	assert.Contains(t, stderr, `k: 3 in the journal, 5 now`)
}

func TestHanoiWithDifficulty(t *testing.T) {
	t.Parallel()
	code, out, stderr := cli(t, "hanoi", "--disks", "6", "--p", "0.95", "--difficulty-spread", "0.2", "--hard-agree", "1", "--json")
	require.Contains(t, []int{0, 1}, code, stderr) // hard steps may be decided wrong: that is the point
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.EqualValues(t, 63, r["steps"])
}

// TestEverySimFlagRefusedWithARealModel: README.md's run-flags table says
// the simulated model's flags (the row that starts with `--seed`) are
// "the simulated model only (refused with a real one)". Each flag of that
// row, with a value it accepts with the simulated model, is refused with a
// real model by hanoi and run (exit 2, naming the flag, nothing on
// stdout); the flags are read from the README, so a flag added to the row
// is checked too.
func TestEverySimFlagRefusedWithARealModel(t *testing.T) {
	t.Parallel()
	row := docRow(t, string(mustRead(t, "../../README.md")), "| `--seed`, ")
	require.Contains(t, row, "refused with a real one")
	first := strings.Split(row, "|")[1]
	var names []string
	for _, f := range strings.Split(first, ",") {
		names = append(names, strings.Trim(strings.TrimSpace(f), "`-"))
	}
	require.Len(t, names, 10, "the row as README.md has it: %q", first)
	value := map[string]string{"seed": "2", "p": "0.9", "flag-rate": "0.01", "error-rate": "0.01", "wrong-answers": "2",
		"concentration": "0.5", "latency": "1ms", "latency-sigma": "0.5", "difficulty-spread": "0.1", "hard-agree": "0.5"}
	spec := "../../testdata/spec/find-version.json"
	for _, name := range names {
		v, ok := value[name]
		require.True(t, ok, "README.md lists --%s among the simulated model's flags: give it a value here", name)
		for _, cmd := range [][]string{{"hanoi", "--disks", "2"}, {"run", spec}} {
			args := append(append([]string(nil), cmd...), "--progress", "off", "--"+name, v)
			withSim := args
			if name == "latency-sigma" { // a spread of a latency: needs one
				withSim = append(withSim, "--latency", "1ms")
			}
			code, out, stderr := cli(t, withSim...) // with the simulated model: accepted
			require.Equal(t, 0, code, "%v with --model sim: %s", withSim, stderr)
			require.NotEmpty(t, out)
			code, out, stderr = cli(t, append(args, "--model", "ollama:x", "--base-url", "http://127.0.0.1:1")...) // port 1: were the flag let through, the call fails at once
			assert.Equal(t, 2, code, "%v with a real model: %s", args, stderr)
			assert.Contains(t, stderr, "--"+name+" applies to --model sim only", "%v", args)
			assert.Empty(t, out, "%v", args)
		}
	}
}

// docRow returns the last line of doc that starts with prefix (a table's
// row), failing t when there is none.
func docRow(t *testing.T, doc, prefix string) string {
	t.Helper()
	var row string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, prefix) {
			row = line
		}
	}
	require.NotEmpty(t, row, "no line starts with %q", prefix)
	return row
}
