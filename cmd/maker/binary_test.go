package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/mdap-go/mdap/maker/journal"
)

// binary is the maker command built once for the tests that run it as a
// child process: exit statuses, signals and files on disk as a user meets
// them.
var binary string

// binaryRace: binary is race-built (MDAP_RACE_CHILD=1 under -race).
var binaryRace bool

func TestMain(m *testing.M) {
	runAsMaker() // started as the race-built child: racechild_test.go
	// Most of this package's tests run the binary and wait on it (a
	// simulated model's latency, a signal's moment, a server's reply):
	// 4 at once.
	statetest.WaitingParallel(4)
	dir, err := os.MkdirTemp("", "maker-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "maker")
	// A state folder of the tests' own (journal keys and chain heads),
	// inherited by every child: never the user's.
	if err := os.Setenv(journal.StateDirEnv, filepath.Join(dir, "state")); err != nil {
		panic(err)
	}
	// With MDAP_RACE_CHILD=1 under -race every child is built with -race
	// too (a race exits 66). It is not the default: race-built children
	// make this package's binary tests several times slower (over 10
	// minutes on two cores), past the default suite's budget; by default
	// only the kill, signal and resume tests run a race-built child
	// (startRace, racechild_test.go).
	// -s -w: no symbol table or DWARF, which no child reads (stack
	// traces and profiles use the runtime's own tables): a link about a
	// quarter cheaper, on the path of every test of the package.
	buildArgs := []string{"build", "-ldflags=-s -w", "-o", binary}
	if raceEnabled && os.Getenv("MDAP_RACE_CHILD") == "1" {
		buildArgs = append(buildArgs, "-race")
		binaryRace = true
	}
	build := exec.Command("go", append(buildArgs, ".")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building the maker binary: " + err.Error())
	}
	buildRaceChild()
	code := m.Run()
	waitRaceChild()
	os.RemoveAll(dir)
	os.Exit(code)
}

// child is a running maker process.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	race           bool // race-built (startRace): exit 66 means a data race
}

// syncBuffer is a bytes.Buffer a test may read while the child's output
// is still being copied into it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns a copy of what has been written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Bytes returns a copy of what has been written so far.
func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// childEnvs holds, by test name, the environment variables a test gives
// the children it starts (setChildEnv): t.Setenv would set them for the
// whole process, which a parallel test may not do.
var childEnvs sync.Map // test name -> *childEnv

type childEnv struct {
	mu   sync.Mutex
	vars []string // KEY=VALUE, later ones win
}

// setChildEnv sets key to value in the environment of the children t (and
// its subtests) start from now on, as t.Setenv does for the process.
func setChildEnv(t *testing.T, key, value string) {
	t.Helper()
	e, loaded := childEnvs.LoadOrStore(t.Name(), &childEnv{})
	if !loaded {
		t.Cleanup(func() { childEnvs.Delete(t.Name()) })
	}
	ce := e.(*childEnv)
	ce.mu.Lock()
	defer ce.mu.Unlock()
	ce.vars = append(ce.vars, key+"="+value)
}

// childEnviron returns what setChildEnv set for t and the tests it is a
// subtest of, the outermost first.
func childEnviron(t *testing.T) []string {
	var names []string
	for name := t.Name(); ; {
		names = append([]string{name}, names...)
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	var env []string
	for _, n := range names {
		if e, ok := childEnvs.Load(n); ok {
			ce := e.(*childEnv)
			ce.mu.Lock()
			env = append(env, ce.vars...)
			ce.mu.Unlock()
		}
	}
	return env
}

// childGetenv is os.Getenv as t's children see it (see setChildEnv).
func childGetenv(t *testing.T, key string) string {
	env := childEnviron(t)
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return os.Getenv(key)
}

// start starts the binary with args; stdout goes to out when it is
// non-nil, else to a buffer.
func start(t *testing.T, out *os.File, args ...string) *child {
	t.Helper()
	return startBinary(t, binary, binaryRace, out, args...)
}

// startBinary is start with the maker binary bin, built with -race when
// race is true.
func startBinary(t *testing.T, bin string, race bool, out *os.File, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(bin, args...), race: race}
	if env := childEnviron(t); len(env) > 0 {
		c.cmd.Env = append(os.Environ(), env...)
	}
	if out != nil {
		c.cmd.Stdout = out
	} else {
		c.cmd.Stdout = &c.stdout
	}
	c.cmd.Stderr = &c.stderr
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
	return c
}

// exited reports whether the child's process has ended, without reaping
// it (wait does): its /proc entry is a zombie's, or gone. Before wait,
// c.cmd.ProcessState is nil whether or not the process ended.
func (c *child) exited() bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return c.cmd.ProcessState != nil || errors.Is(err, fs.ErrNotExist)
	}
	// "PID (COMM) STATE ...": COMM may hold spaces and parentheses.
	_, rest, _ := bytes.Cut(stat[bytes.LastIndexByte(stat, ')'):], []byte(" "))
	return len(rest) > 0 && (rest[0] == 'Z' || rest[0] == 'X')
}

// wait waits at most d for the process and returns its exit status. A
// data race the child reported fails t (checkRace).
func (c *child) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		checkRace(t, c.cmd.Args[1:], code, c.race, c.stderr.String())
		return code
	case <-time.After(d):
		_ = c.cmd.Process.Kill()
		<-done
		t.Fatalf("maker %v did not end within %s; stderr: %s", c.cmd.Args[1:], d, c.stderr.String())
		return -1
	}
}

func TestBinaryFullStdoutFails(t *testing.T) {
	t.Parallel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full on this system")
	}
	defer full.Close()
	for _, args := range [][]string{
		{"hanoi", "--disks", "3", "--progress", "off"},
		{"hanoi", "--disks", "3", "--json"},
		{"kmin", "--json"},
		{"tools"},
	} {
		c := start(t, full, args...)
		assert.Equal(t, 1, c.wait(t, time.Minute), "%v: output lost to a full disk is a failure", args)
		assert.Contains(t, c.stderr.String(), "writing the output failed", "%v", args)
	}
}

func TestBinaryInterruptExits130(t *testing.T) {
	t.Parallel()
	// The two signals' runs have journals of their own and wait on the
	// simulated latency: they run at once (in a group, so that this
	// test's time is theirs).
	t.Run("signals", func(t *testing.T) {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(sig.String(), func(t *testing.T) {
				t.Parallel()
				j := filepath.Join(t.TempDir(), "j.jsonl")
				c := startRace(t, nil, "hanoi", "--disks", "10", "--latency", "1ms", "--journal", j, "--progress", "off")
				require.Eventually(t, func() bool { return countLines(j) > 20 }, 30*time.Second, 10*time.Millisecond)
				require.NoError(t, c.cmd.Process.Signal(sig))
				assert.Equal(t, 130, c.wait(t, 30*time.Second), sig.String())
				// README.md: "130 interrupted (a run with `--journal` says how to
				// resume with `--resume` and the same flags)"; the next run here
				// follows that advice.
				assert.Contains(t, c.stderr.String(), "maker: interrupted; the decided steps are in "+j+": resume with --journal "+j+" --resume and the same flags", sig.String())
				assert.NotContains(t, c.stderr.String(), "context canceled", sig.String())

				// The resume runs the plain binary: the signal above is
				// what the race build is for, and the race-built resume of
				// the rest of the 1,023 steps doubled this test's time
				// (4.5 s against 2.2 s, alone on 2 cores).
				c = start(t, nil, "hanoi", "--disks", "10", "--latency", "1ms", "--journal", j, "--resume", "--json")
				_ = c.wait(t, 2*time.Minute) // solved or not, the journal was accepted
				assert.Contains(t, c.stdout.String(), `"resumed"`, sig.String())
				assert.NotContains(t, c.stderr.String(), "journal", "%s: the interrupted journal resumes", sig)
			})
		}
	})
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

// lineCounter counts the whole lines of a file that grows at its end,
// reading only what was appended since its last count: a journal polled
// every few milliseconds is megabytes, and reading it whole each time
// (countLines) was most of TestBinarySurvivesKills's CPU. A resume cuts
// only a torn tail (after the last newline), which it has not counted.
type lineCounter struct {
	path string
	off  int64 // just past the last newline counted
	n    int
}

func newLineCounter(path string) *lineCounter {
	c := &lineCounter{path: path}
	c.count()
	return c
}

// count returns the whole lines so far.
func (c *lineCounter) count() int {
	f, err := os.Open(c.path)
	if err != nil {
		return c.n
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, c.off, 1<<62))
	if err != nil {
		return c.n
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		c.n += bytes.Count(b[:i+1], []byte("\n"))
		c.off += int64(i + 1)
	}
	return c.n
}

func TestBinaryRefusesAFIFOJournalAtOnce(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, args := range [][]string{
		{"hanoi", "--disks", "3", "--journal", fifo},
		{"hanoi", "--disks", "3", "--journal", fifo, "--resume"},
	} {
		c := start(t, nil, args...)
		assert.Equal(t, 2, c.wait(t, 10*time.Second), "%v", args)
		assert.Contains(t, c.stderr.String(), "named pipe", "%v", args)
	}
}

func TestBinaryUsageErrorWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := filepath.Join(dir, "j.jsonl")
	c := start(t, nil, "hanoi", "--k", "65537", "--journal", j)
	assert.Equal(t, 2, c.wait(t, 10*time.Second))
	assert.Empty(t, c.stdout.String())
	assert.True(t, strings.HasPrefix(c.stderr.String(), `maker: invalid argument "65537" for "--k" flag: want a margin from 1 to 1000`), c.stderr.String())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
}

// summary reads a --json summary from a child's stdout.
func (c *child) summary(t *testing.T) hanoiSummary {
	t.Helper()
	var s hanoiSummary
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s), "stdout %q stderr %q", c.stdout.String(), c.stderr.String())
	return s
}

// TestBinarySurvivesKills kills a 12-disk run at random moments, resumes it
// each time, and compares the end with an uninterrupted run: the same
// winners, keys and votes, the same totals, no step twice. The
// uninterrupted run and the three signalled ones (SIGKILL, SIGINT,
// SIGTERM) have files of their own and wait on the simulated latency and
// on their resumes: they run at once, as parallel subtests.
func TestBinarySurvivesKills(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills a real process many times")
	}
	dir := t.TempDir()
	const disks = 12
	args := []string{"hanoi", "--disks", strconv.Itoa(disks), "--p", "0.99", "--flag-rate", "0.02", "--seed", "21", "--latency", "500us", "--progress", "off", "--json"}
	whole := filepath.Join(dir, "whole.jsonl")

	// The moments of the signals are random; the seed is logged, and
	// MDAP_KILL_SEED replays a failing run's moments (each signal's
	// series draws from a stream of its own).
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("MDAP_KILL_SEED"); v != "" {
		var err error
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "MDAP_KILL_SEED")
	}
	t.Logf("signal moments from seed %d (replay: MDAP_KILL_SEED=%d)", seed, seed)
	series := []struct {
		sig   syscall.Signal
		times int
		code  int
	}{{syscall.SIGKILL, 10, -1}, {syscall.SIGINT, 3, 130}, {syscall.SIGTERM, 3, 130}}
	// The journals are read back in the subtests, at once: race-built,
	// in process, reading a 4,096-line journal takes seconds.
	var want hanoiSummary
	var wantDecided []string
	got := make([]hanoiSummary, len(series))
	gotDecided := make([][]string, len(series))
	kills := make([]int, len(series))
	ranOut := make([]bool, len(series)) // a series whose run decided its last step before its last signal
	t.Run("runs", func(t *testing.T) {
		t.Run("uninterrupted", func(t *testing.T) {
			t.Parallel()
			c := start(t, nil, append(args, "--journal", whole)...) // the reference: the plain child
			require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
			want = c.summary(t)
			require.True(t, want.Solved)
			wantDecided = decided(t, whole)
		})
		for i, sig := range series {
			t.Run(sig.sig.String(), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(seed, uint64(1+i)))
				j := filepath.Join(dir, sig.sig.String()+".jsonl")
				for resume := false; ; resume = true {
					a := append(args, "--journal", j)
					if resume {
						a = append(a, "--resume")
					}
					lc := newLineCounter(j)
					lines := lc.n
					c := startRace(t, nil, a...)
					// The last run; or one resuming a journal that holds
					// every step: a signal met the run after its last step
					// was written and before it ended (a parent held up
					// under load, a child that was not), and the resume
					// only ends it.
					if kills[i] == sig.times || lines > 1<<disks-1 {
						ranOut[i] = kills[i] < sig.times
						require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
						got[i] = c.summary(t)
						gotDecided[i] = decided(t, j)
						return
					}
					// Signal a run that has begun and decided between 1 and 250
					// more steps: a signal before the program installed its
					// handler would test Go's start-up, not maker, and a
					// series' 10 stretches at most (2,500 steps) end far from
					// the end of the 4,095-step run (a signal lands some steps
					// after its stretch: at 11 disks, 2,047 steps, a SIGKILL
					// series reached the end after 8 signals).
					more := 1 + rng.IntN(250)
					if !assert.Eventually(t, func() bool { return lc.count() >= lines+more || c.exited() }, time.Minute, 2*time.Millisecond) {
						c.cmd.Process.Kill()
						t.Fatalf("%s: no %d more lines in the journal (%d at the start) within a minute; the run's stderr:\n%s", sig.sig, more, lines, c.stderr.String())
					}
					require.NoError(t, c.cmd.Process.Signal(sig.sig), "%s: the run ended before the signal", sig.sig)
					code := c.wait(t, time.Minute)
					require.NotEqual(t, 0, code, "%s: the run finished before the signal", sig.sig)
					if sig.code > 0 {
						assert.Equal(t, sig.code, code, "%s: %s", sig.sig, c.stderr.String())
					}
					kills[i]++
				}
			})
		}
	})
	if t.Failed() {
		return // a run failed: there is nothing whole to compare
	}
	signals := 0
	for i, sig := range series {
		// The last run resumed and finished: its totals and its journal
		// are the uninterrupted run's.
		assert.Equal(t, want.Steps, got[i].Steps, sig.sig.String())
		assert.Equal(t, want.Samples, got[i].Samples, sig.sig.String())
		assert.Equal(t, want.Valid, got[i].Valid, sig.sig.String())
		assert.Equal(t, want.Flagged, got[i].Flagged, sig.sig.String())
		assert.Equal(t, want.Flags, got[i].Flags, sig.sig.String())
		assert.Equal(t, want.OutputTokens, got[i].OutputTokens, sig.sig.String())
		assert.True(t, got[i].Solved, sig.sig.String())
		assert.Equal(t, wantDecided, gotDecided[i], "%s after %d signals: the same winners, keys and votes, each step once", sig.sig, kills[i])
		if ranOut[i] {
			t.Logf("%s: the run decided its last step before its signal %d of %d (a signalled run overshot its stretch)", sig.sig, kills[i], sig.times)
			assert.Positive(t, kills[i], "%s: a signal met a running process", sig.sig)
		} else {
			assert.Equal(t, sig.times, kills[i], "%s: every signal met a running process", sig.sig)
		}
		signals += kills[i]
	}
	t.Logf("%d signals survived", signals)
}

// TestBinarySecondRunOnAJournalRefused starts two runs on one journal: the
// second is refused at once and the journal is not touched by it.
func TestBinarySecondRunOnAJournalRefused(t *testing.T) {
	t.Parallel()
	j := filepath.Join(t.TempDir(), "j.jsonl")
	first := start(t, nil, "hanoi", "--disks", "10", "--latency", "2ms", "--journal", j, "--progress", "off")
	require.Eventually(t, func() bool { return countLines(j) > 5 }, 30*time.Second, 5*time.Millisecond)
	second := start(t, nil, "hanoi", "--disks", "10", "--latency", "2ms", "--journal", j, "--resume", "--progress", "off")
	assert.Equal(t, 2, second.wait(t, 10*time.Second))
	assert.Contains(t, second.stderr.String(), "locked by another process")
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, first.wait(t, 30*time.Second))
	// The first run's journal resumes cleanly: the second wrote nothing.
	third := start(t, nil, "hanoi", "--disks", "10", "--journal", j, "--resume", "--json")
	require.Equal(t, 0, third.wait(t, time.Minute), third.stderr.String())
	assert.True(t, third.summary(t).Solved)
}

// TestBinaryFullDiskFailsBeforeTheNextStep runs with a file-size limit
// that the journal reaches mid-run (as a full disk would): the run fails
// at once, naming the journal, and resumes once there is room.
func TestBinaryFullDiskFailsBeforeTheNextStep(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for ulimit")
	}
	dir := t.TempDir()
	j := filepath.Join(dir, "j.jsonl")
	c := &child{cmd: exec.Command("bash", "-c", `ulimit -f 32 && exec "$0" "$@"`, binary, "hanoi", "--disks", "10", "--journal", j, "--progress", "off")}
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	require.NoError(t, c.cmd.Start())
	assert.Equal(t, 1, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "could not be journaled")
	assert.Contains(t, c.stderr.String(), j)
	assert.Contains(t, c.stderr.String(), "resume", "it says what to do")
	fi, err := os.Stat(j)
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(32*1024))

	// With room again, the run resumes from what was journaled.
	c = start(t, nil, "hanoi", "--disks", "10", "--journal", j, "--resume", "--json")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	s := c.summary(t)
	assert.True(t, s.Solved)
	assert.Positive(t, s.Resumed)
}

// TestBinaryBenchQuick runs the benchmark command as a user would, on its
// quickest suite with charts (.ci/run runs every suite with --quick, and
// benchmarks' tests draw every chart): the report and the suite's charts
// land in --out, and the command exits 0. Its stderr, not a terminal, has
// a line per finished row; --progress off has none.
func TestBinaryBenchQuick(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the quick benchmark takes several seconds")
	}
	out := filepath.Join(t.TempDir(), "bench")
	c := start(t, nil, "bench", "--quick", "--suite", "strategies", "--out", out)
	// --progress off, on another suite and folder, runs meanwhile.
	quiet := start(t, nil, "bench", "--quick", "--suite", "cost", "--out", filepath.Join(t.TempDir(), "bench"), "--progress", "off")
	require.Equal(t, 0, c.wait(t, 5*time.Minute), "stderr: %s", c.stderr.String())
	for _, f := range []string{"REPORT.md", "report.json", "strategies.svg", "strategies_wall.svg"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "maker bench --quick --suite strategies --out "+out, "the report names its command")
	assert.Contains(t, c.stdout.String(), "report in "+filepath.Join(out, "REPORT.md"))
	// Stderr is not a terminal: a line per finished row, not silence.
	var total int
	_, err = fmt.Sscanf(c.stderr.String(), "bench: strategies: %d rows\n", &total)
	require.NoError(t, err, "the suite's first line names its rows: %s", c.stderr.String())
	require.Positive(t, total)
	for done := 1; done <= total; done++ {
		assert.Contains(t, c.stderr.String(), fmt.Sprintf("bench: strategies: %d/%d rows, ", done, total), "a line per finished row")
	}
	assert.NotContains(t, c.stderr.String(), "\r", "no bar drawn into a file")

	require.Equal(t, 0, quiet.wait(t, 5*time.Minute), "stderr: %s", quiet.stderr.String())
	assert.Empty(t, quiet.stderr.String(), "--progress off: nothing on stderr")
}

func TestBinaryBenchUsage(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--suite", "speed"}, `--suite "speed"`},
		{[]string{"bench", "--out", ""}, "--out"},
		{[]string{"bench", "--progress", "loud"}, `--progress "loud": use auto, on or off`},
		{[]string{"bench", "--out", file}, "is a file"},
		{[]string{"bench", "--quick=maybe"}, "--quick"},
		{[]string{"bench", "extra"}, "extra"},
	} {
		ch := start(t, nil, c.args...)
		assert.Equal(t, 2, ch.wait(t, time.Minute), "%v", c.args)
		assert.Contains(t, ch.stderr.String(), c.want, "%v", c.args)
	}
	assert.NoFileExists(t, filepath.Join(file, "REPORT.md"))
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// TestChildExitedBeforeWait: exited sees a child that ended before its
// wait (c.cmd.ProcessState, which the binary tests waited on before,
// stays nil until then), and sees a running one as running.
func TestChildExitedBeforeWait(t *testing.T) {
	t.Parallel()
	running := start(t, nil, "serve-sim", "--addr", "127.0.0.1:0")
	c := start(t, nil, "tools")
	require.Eventually(t, c.exited, 30*time.Second, 5*time.Millisecond, "the child ended")
	assert.Nil(t, c.cmd.ProcessState, "not reaped yet")
	assert.Equal(t, 0, c.wait(t, time.Minute))
	assert.False(t, running.exited(), "serve-sim still serves")
}
