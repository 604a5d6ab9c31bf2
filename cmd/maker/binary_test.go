package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binary is the maker command built once for the tests that run it as a
// child process: exit statuses, signals and files on disk as a user meets
// them.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "maker-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "maker")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building the maker binary: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// child is a running maker process.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

// start starts the binary with args; stdout goes to out when it is
// non-nil, else to a buffer.
func start(t *testing.T, out *os.File, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(binary, args...)}
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

// wait waits at most d for the process and returns its exit status.
func (c *child) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(d):
		_ = c.cmd.Process.Kill()
		<-done
		t.Fatalf("maker %v did not end within %s; stderr: %s", c.cmd.Args[1:], d, c.stderr.String())
		return -1
	}
}

func TestBinaryFullStdoutFails(t *testing.T) {
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
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		j := filepath.Join(t.TempDir(), "j.jsonl")
		c := start(t, nil, "hanoi", "--disks", "10", "--latency", "1ms", "--journal", j, "--progress", "off")
		require.Eventually(t, func() bool { return countLines(j) > 20 }, 30*time.Second, 10*time.Millisecond)
		require.NoError(t, c.cmd.Process.Signal(sig))
		assert.Equal(t, 130, c.wait(t, 30*time.Second), sig.String())
		assert.Contains(t, c.stderr.String(), "maker: interrupted; the decided steps are in "+j, sig.String())
		assert.NotContains(t, c.stderr.String(), "context canceled", sig.String())

		c = start(t, nil, "hanoi", "--disks", "10", "--latency", "1ms", "--journal", j, "--resume", "--json")
		_ = c.wait(t, 2*time.Minute) // solved or not, the journal was accepted
		assert.Contains(t, c.stdout.String(), `"resumed"`, sig.String())
		assert.NotContains(t, c.stderr.String(), "journal", "%s: the interrupted journal resumes", sig)
	}
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

func TestBinaryRefusesAFIFOJournalAtOnce(t *testing.T) {
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
	dir := t.TempDir()
	j := filepath.Join(dir, "j.jsonl")
	c := start(t, nil, "hanoi", "--k", "65537", "--journal", j)
	assert.Equal(t, 2, c.wait(t, 10*time.Second))
	assert.Empty(t, c.stdout.String())
	assert.True(t, strings.HasPrefix(c.stderr.String(), "maker: --k 65537"), c.stderr.String())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
}
