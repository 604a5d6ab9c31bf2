package main

import (
	"context"
	"fmt"
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

// runBinary runs the maker binary with args and extra environment, and
// returns its exit status and stderr.
func runBinary(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a blocked child fails the test
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestBinaryEditedJournalRefused: a journal with one winner changed is
// refused on --resume with exit 2, naming its first bad line, and left as
// it was; with MDAP_JOURNAL_KEY the chain is an HMAC under that key, and
// resuming without it (the state folder's key then), or with a key too
// short, exits 2 too.
func TestBinaryEditedJournalRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := filepath.Join(dir, "run.jsonl")
	args := []string{"hanoi", "--disks", "4", "--seed", "3", "--progress", "off", "--journal", j}
	code, stderr := runBinary(t, nil, args...)
	require.Equal(t, 0, code, stderr)
	lines := strings.SplitAfter(string(mustRead(t, j)), "\n")
	require.Contains(t, lines[3], `"winner":{"value":`)
	i := strings.Index(lines[3], `"winner":{"value":`) + len(`"winner":{"value":`)
	k := strings.IndexAny(lines[3][i:], "0123456789") + i
	lines[3] = lines[3][:k] + string('0'+(lines[3][k]-'0'+1)%10) + lines[3][k+1:]
	edited := strings.Join(lines, "")
	require.NoError(t, os.WriteFile(j, []byte(edited), 0o644))
	code, stderr = runBinary(t, nil, append(args, "--resume")...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, j+":4 does not match the journal's hash chain")
	assert.Equal(t, edited, string(mustRead(t, j)), "left as it was")

	keyed := filepath.Join(dir, "keyed.jsonl")
	kargs := []string{"hanoi", "--disks", "3", "--progress", "off", "--journal", keyed}
	key := "MDAP_JOURNAL_KEY=0123456789abcdef0123456789abcdef"
	code, stderr = runBinary(t, []string{key}, kargs...)
	require.Equal(t, 0, code, stderr)
	code, stderr = runBinary(t, []string{key}, append(kargs, "--resume")...)
	assert.Equal(t, 0, code, stderr)
	code, stderr = runBinary(t, []string{"MDAP_JOURNAL_KEY="}, append(kargs, "--resume")...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, keyed+":1 does not match", "the state folder's key does not fit")
	assert.Contains(t, stderr, "MDAP_JOURNAL_KEY")
	code, stderr = runBinary(t, []string{"MDAP_JOURNAL_KEY=short"}, "hanoi", "--disks", "3", "--progress", "off", "--journal", filepath.Join(dir, "new.jsonl"))
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "at least 16")
	assert.NoFileExists(t, filepath.Join(dir, "new.jsonl"), "nothing written")
}

// TestBinarySolveFullDiskNeverFailsATask: `maker solve --state` on a
// small tmpfs that fills up (a real ENOSPC; where mounting is not allowed,
// a file-size limit, EFBIG) exits 1 naming the cause and records no task
// as failed; once room is made, the same command finishes with the
// results of an uninterrupted batch.
func TestBinarySolveFullDiskNeverFailsATask(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tasks := mixedTasks(t, root, 8, 6, 7)
	args := func(dir string) []string {
		return append([]string{"solve", tasks, "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "state"), "--concurrency", "2"}, simArgs...)
	}
	ref := filepath.Join(root, "ref")
	code, stderr := runBinary(t, nil, args(ref)...)
	require.Equal(t, 0, code, stderr)

	dir := filepath.Join(root, "full")
	state := filepath.Join(dir, "state")
	require.NoError(t, os.MkdirAll(state, 0o755))
	first := exec.Command(binary, args(dir)...)
	makeRoom := func() {}
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", state).Run(); err == nil {
		t.Cleanup(func() { _ = exec.Command("umount", state).Run() })
		makeRoom = func() { require.NoError(t, exec.Command("mount", "-o", "remount,size=16m", state).Run()) }
	} else {
		t.Logf("no tmpfs (%v): a file-size limit of 32 KiB instead", err)
		first = exec.Command("bash", append([]string{"-c", `ulimit -f 32 && exec "$0" "$@"`, binary}, args(dir)...)...)
	}
	var errb strings.Builder
	first.Stderr = &errb
	err := first.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the batch must hit the full disk: %s", errb.String())
	assert.Equal(t, 1, ee.ExitCode(), errb.String())
	assert.Regexp(t, `no space left on device|file too large`, errb.String(), "the cause is named")
	assert.Contains(t, errb.String(), "run the same command again")
	got := results(t, filepath.Join(dir, "results.jsonl"))
	require.Less(t, len(got), 8, "some tasks were stopped")
	for id, r := range got {
		assert.Equal(t, "solved", r["status"], "%s: only solved tasks are recorded, never failed", id)
	}

	makeRoom()
	code, stderr = runBinary(t, nil, args(dir)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, results(t, filepath.Join(ref, "results.jsonl")), results(t, filepath.Join(dir, "results.jsonl")), "the results of the uninterrupted batch")
}

// TestBinaryFIFOInputsRefusedAtOnce: a FIFO (nobody writing) given as a
// spec file, a tasks file or a reply file is refused at once with exit 2
// and a message naming it; so is a device. At once: before the open that
// would wait for a writer forever; the bound, 30 s, is a process's start
// on a loaded machine and more, not a promise of speed.
func TestBinaryFIFOInputsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, args := range [][]string{
		{"run", fifo, "--progress", "off"},
		{"solve", fifo, "--out", filepath.Join(dir, "out.jsonl")},
		{"parse", "--spec", fifo, filepath.Join(dir, "missing")},
		{"parse", fifo},
		{"calibrate", "--spec", fifo},
		{"run", "/dev/zero", "--progress", "off"},
	} {
		start := time.Now()
		code, stderr := runBinary(t, nil, args...)
		took := time.Since(start)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.Less(t, took, 30*time.Second, "%v", args)
		assert.Regexp(t, `a named pipe \(FIFO\)|a character device`, stderr, "%v", args)
	}
	assert.NoFileExists(t, filepath.Join(dir, "out.jsonl"), "nothing written")
}

// TestBinarySignalEndsEveryState: SIGTERM and SIGINT end the process
// within a second even where the command cannot notice them (here:
// reading a reply from a stdin nobody writes), with exit 130.
func TestBinarySignalEndsEveryState(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(binary, "parse", "-")
		stdin, err := cmd.StdinPipe() // held open, never written
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		waitBlockedInPipeRead(t, cmd.Process.Pid) // so the signal handlers are in place
		sent := time.Now()
		require.NoError(t, cmd.Process.Signal(sig))
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%v did not end the process", sig)
		}
		stdin.Close()
		took := time.Since(sent)
		assert.Equal(t, 130, cmd.ProcessState.ExitCode(), "%v: %s", sig, stderr.String())
		assert.Less(t, took, 1500*time.Millisecond, "%v: within a second (and some scheduling)", sig)
		assert.Contains(t, stderr.String(), "interrupted")
	}
}

// waitBlockedInPipeRead waits until one of process pid's threads sleeps in
// a pipe read (its /proc wchan), which main reaches only after installing
// its signal handlers; a sleep of fixed length is too short for a -race
// child on a loaded machine, and a signal before the handlers kills the
// process instead of ending it with 130.
func waitBlockedInPipeRead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		for _, w := range tasks {
			if b, err := os.ReadFile(w); err == nil && strings.Contains(string(b), "pipe") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never blocked reading its stdin", pid)
}
