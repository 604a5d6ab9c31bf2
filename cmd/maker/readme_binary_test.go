package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeShellLines returns the lines of README.md's ```sh blocks, each
// without its trailing comment, in order.
func readmeShellLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var lines []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && strings.TrimPrefix(l, "```") == "sh"
		case in:
			if i := strings.Index(l, " #"); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	require.NoError(t, sc.Err())
	return lines
}

// readmeExample is a command of README.md run as a user pastes it.
type readmeExample struct {
	cmd  string   // a line of a ```sh block, or a command the README's prose names
	pre  string   // the README's shell lines that come before it (dir=..., out=...)
	prog bool     // from the prose or the command table, not a ```sh block
	code int      // the exit status
	out  []string // fragments of stdout
	// check inspects the temporary folder mktemp wrote into.
	check func(t *testing.T, tmp string)
}

// offlineExample tells a README ```sh line that runs here (no model
// server, no NATS, nothing in the background, no fixed port to listen on,
// no file the README leaves to the reader, not the run view: its own
// binary tests run it on a journal they make) from one that does not.
func offlineExample(l string) bool {
	if !strings.HasPrefix(l, "maker ") {
		return false
	}
	for _, s := range []string{"--model", "--nats", "--base-url", " &", "\\", "maker nats", "maker worker", "maker mcp", "maker serve-sim", "maker bench", "--metrics-addr", "--ui", "maker view", "task.json", "tasks.jsonl --"} {
		if strings.Contains(l, s) {
			return false
		}
	}
	return true
}

// TestBinaryReadme follows README.md word for word with the built binary:
// the first section's run, the offline examples of "Your own tasks" and
// "Before a long run" (taken from the README's ```sh blocks, so the test
// fails when the README changes them or adds an offline example without a
// check here), and the commands its prose and command table name (parse,
// tools, --help, --version, completion). Exit statuses and the output the
// README describes are checked; mktemp's folders land in the test's own
// temporary folder, so nothing is written to the checkout. Not run: the
// README's `go build` line (TestMain builds the same package the same
// way), `go test -race ./...` (this suite), and the examples that need a
// model server, NATS or a long run (`maker bench` without --quick).
func TestBinaryReadme(t *testing.T) {
	t.Parallel()
	lines := readmeShellLines(t)
	require.True(t, slices.Contains(lines, `go run ./cmd/maker hanoi --disks 10`), "the README's first command")
	require.True(t, slices.Contains(lines, `go test -race ./...`), "the README's last command of its first section")

	examples := []readmeExample{
		// The first section: `go run ./cmd/maker hanoi --disks 10`, here
		// through the binary TestMain built from the same package.
		{cmd: "maker hanoi --disks 10", prog: true, out: []string{"hanoi 10 disks", "solved true, 0 wrong steps", "steps 1023 (resumed 0), done true"}},
		// Your own tasks: `maker run` and `maker solve`.
		{cmd: "maker run testdata/spec/find-version.json", out: []string{"solved true", `"version":"1.4.2"`}},
		{cmd: `maker run testdata/spec/write-note.json --root "$dir" --tools read_only,write_file`, pre: `dir=$(mktemp -d)`,
			out: []string{"solved true", `state: {"wrote":true}`},
			check: func(t *testing.T, tmp string) {
				notes, _ := filepath.Glob(filepath.Join(tmp, "*", "note.txt"))
				assert.Len(t, notes, 1, "note.txt lands in $dir")
			}},
		{cmd: `maker solve testdata/batch/inputs.jsonl --spec testdata/spec/find-version.json --out "$out/inputs.jsonl"`, pre: `out=$(mktemp -d)`,
			out: []string{"2 tasks: 2 solved, 0 failed, 0 invalid"}},
		{cmd: `maker solve testdata/batch/tasks.jsonl --out "$out/results.jsonl" --state "$out/state"`, pre: `out=$(mktemp -d)`,
			out: []string{"5 tasks: 5 solved, 0 failed, 0 invalid"},
			check: func(t *testing.T, tmp string) {
				results, _ := filepath.Glob(filepath.Join(tmp, "*", "results.jsonl"))
				require.Len(t, results, 1, "the results file is in $out")
				b, err := os.ReadFile(results[0])
				require.NoError(t, err)
				assert.Equal(t, 5, bytes.Count(b, []byte(`"status":"solved"`)), "%s", b)
				assert.Contains(t, string(b), `{"id":"hanoi-8-k4","line":5,"kind":"hanoi","status":"solved","steps":255,"samples":1022,`, "the fields and figures of the README's results line (there on line 3 of a shorter file)")
			}},
		// Before a long run: `maker calibrate` and `--k auto`.
		{cmd: "maker calibrate --disks 12 --p 0.97 --wrong-answers 1 --until-decided --price-in 0.4 --price-out 1.6", out: []string{"p = 0.97", "95% interval", "confidence region of mean p and spread", "k_min 5 for 4095 steps at target 0.95 over the whole confidence region", "whole-run success at least"}},
		{cmd: "maker hanoi --disks 12 --p 0.95 --wrong-answers 1 --k auto --target 0.95", out: []string{"hanoi 12 disks, k=auto", "solved true", "steps by k:", "failure budget"}},
		{cmd: "maker kmin --steps 1048575 --p 0.9978 --target 0.95", out: []string{"k_min            3", "p_full           0.988824"}},
		// The command line's prose and table (README "The command line").
		{cmd: "maker --version", prog: true, out: []string{"maker "}},
		{cmd: "maker completion bash", prog: true, out: []string{"bash completion"}},
		{cmd: "maker tools", prog: true, out: []string{"write_file", "list_tool_categories"}},
		{cmd: "maker parse testdata/responses/good.txt testdata/responses/prose.txt", prog: true,
			out: []string{"good.txt: key ", `prose.txt: red flag "unparseable"`, "2 replies: 1 distinct answer, 1 red-flagged"}},
	}

	// Every offline ```sh example of the README is checked here.
	checked := map[string]bool{}
	for _, e := range examples {
		checked[e.cmd] = true
		if !e.prog {
			assert.True(t, slices.Contains(lines, e.cmd), "README.md no longer shows %q: update the README or this test", e.cmd)
			if e.pre != "" {
				assert.True(t, slices.Contains(lines, e.pre), "README.md no longer shows %q", e.pre)
			}
		}
	}
	for _, l := range lines {
		if offlineExample(l) && !checked[l] {
			t.Errorf("README.md shows %q, which runs offline: add it to TestBinaryReadme", l)
		}
	}

	// `maker --help` lists every command of the README's command table.
	help := exec.Command(binary, "--help")
	helpOut, err := help.Output()
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	rows := regexp.MustCompile("(?m)^\\| `maker ([a-z-]+)[^`]*`").FindAllSubmatch(readme, -1)
	require.GreaterOrEqual(t, len(rows), 10, "the README's command table")
	for _, r := range rows {
		assert.Regexp(t, "(?m)^  "+string(r[1])+" ", string(helpOut), "maker --help lists %s", r[1])
	}

	binDir := filepath.Dir(binary)
	for _, e := range examples {
		t.Run(e.cmd, func(t *testing.T) {
			tmp := t.TempDir()
			script := e.cmd
			if e.pre != "" {
				script = e.pre + "\n" + script
			}
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = "../.."
			cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+tmp)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("%s did not end; stderr: %s", e.cmd, stderr.String())
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, e.code, code, "exit status; stderr: %s", stderr.String())
			for _, f := range e.out {
				assert.Contains(t, stdout.String(), f)
			}
			if e.check != nil {
				e.check(t, tmp)
			}
		})
	}
}
