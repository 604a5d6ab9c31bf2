package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func TestStoreWritesWholeLinesAndReadsThemBack(t *testing.T) {
	dir := t.TempDir()
	out, state := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "state")
	s, err := OpenStore(out, state)
	require.NoError(t, err)
	a := Result{ID: "a", Line: 1, Kind: "hanoi", Status: StatusSolved, Steps: 7, State: json.RawMessage(`[[],[],[3,2,1]]`)}
	bad := Result{Line: 2, Status: StatusInvalid, Error: "line 2: malformed JSON"}
	require.NoError(t, s.Write(a))
	require.NoError(t, s.Write(bad))
	require.ErrorIs(t, s.Write(Result{ID: "a", Line: 9, Status: StatusFailed}), ErrRecorded)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close twice is fine")

	b := mustRead(t, out)
	lines := strings.SplitAfter(string(b), "\n")
	require.Len(t, lines, 3)
	assert.Empty(t, lines[2], "the file ends with a newline")

	s, err = OpenStore(out, state)
	require.NoError(t, err)
	defer s.Close()
	got, ok := s.Done(Job{ID: "a", Line: 5})
	require.True(t, ok, "found by id whatever its line")
	assert.Equal(t, 7, got.Steps)
	_, ok = s.Done(Job{Line: 2})
	assert.True(t, ok, "a result without an id is found by line")
	_, ok = s.Done(Job{Line: 3})
	assert.False(t, ok)
	assert.Len(t, s.Recorded(), 2)
	assert.Zero(t, s.TornBytes())
}

func TestStoreDropsATornLastLine(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.jsonl")
	whole := `{"id":"a","line":1,"status":"solved"}` + "\n"
	require.NoError(t, os.WriteFile(out, []byte(whole+`{"id":"b","line":2,"sta`), 0o644))
	s, err := OpenStore(out, "")
	require.NoError(t, err)
	assert.Equal(t, len(`{"id":"b","line":2,"sta`), s.TornBytes())
	assert.Equal(t, whole, string(mustRead(t, out)), "the torn line is cut off at once")
	_, ok := s.Done(Job{ID: "b"})
	assert.False(t, ok, "a torn result does not count: the job runs again")
	require.NoError(t, s.Write(Result{ID: "b", Line: 2, Status: StatusSolved}))
	require.NoError(t, s.Close())
	b := mustRead(t, out)
	assert.Equal(t, 2, bytes.Count(b, []byte("\n")))
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		assert.True(t, json.Valid([]byte(l)), l)
	}
}

func TestStoreRefusesACorruptFileAndTouchesNothing(t *testing.T) {
	for name, content := range map[string]string{
		"not json":     `{"id":"a","line":1,"status":"solved"}` + "\nhello\n",
		"no status":    `{"id":"a","line":1}` + "\n",
		"bad status":   `{"id":"a","line":1,"status":"great"}` + "\n",
		"no key":       `{"status":"solved"}` + "\n",
		"repeated key": `{"id":"a","line":1,"status":"solved"}` + "\n" + `{"id":"a","line":4,"status":"failed"}` + "\n",
	} {
		dir := t.TempDir()
		out, state := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "state")
		require.NoError(t, os.WriteFile(out, []byte(content), 0o644))
		_, err := OpenStore(out, state)
		require.ErrorIs(t, err, ErrResultsCorrupt, name)
		assert.Contains(t, err.Error(), "line ", name)
		assert.Equal(t, content, string(mustRead(t, out)), name)
		assert.NoDirExists(t, state, "%s: a refused open creates nothing", name)
	}
}

func TestStoreSecondBatchRefusedAtOnceTouchingNothing(t *testing.T) {
	dir := t.TempDir()
	out, state := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "state")
	first, err := OpenStore(out, state)
	require.NoError(t, err)
	defer first.Close()
	require.NoError(t, first.Write(Result{ID: "a", Line: 1, Status: StatusSolved}))
	before := mustRead(t, out)

	// Same results file, another state folder.
	other := filepath.Join(dir, "other-state")
	_, err = OpenStore(out, other)
	require.ErrorIs(t, err, ErrLocked)
	assert.Contains(t, err.Error(), "--out")
	assert.NoDirExists(t, other, "nothing created")

	// Same state folder, another results file.
	otherOut := filepath.Join(dir, "other.jsonl")
	_, err = OpenStore(otherOut, state)
	require.ErrorIs(t, err, ErrLocked)
	assert.Contains(t, err.Error(), "--state")
	assert.NoFileExists(t, otherOut, "nothing created")
	assert.Equal(t, before, mustRead(t, out))

	// A state folder that exists but was never used: its lock file goes
	// again when the results file is the one refused.
	fresh := filepath.Join(dir, "fresh")
	require.NoError(t, os.Mkdir(fresh, 0o755))
	_, err = OpenStore(out, fresh)
	require.ErrorIs(t, err, ErrLocked)
	entries, err := os.ReadDir(fresh)
	require.NoError(t, err)
	assert.Empty(t, entries)

	require.NoError(t, first.Close())
	again, err := OpenStore(out, state)
	require.NoError(t, err, "free again once the first batch closed")
	require.NoError(t, again.Close())
}

func TestStoreRefusesWrongKindsOfPath(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenStore(dir, "")
	assert.ErrorIs(t, err, ErrStorePath)
	f := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err = OpenStore(filepath.Join(dir, "r.jsonl"), f)
	assert.ErrorIs(t, err, ErrStorePath)
	assert.NoFileExists(t, filepath.Join(dir, "r.jsonl"))
	_, err = OpenStore("", "")
	assert.ErrorIs(t, err, ErrStorePath)
	_, err = OpenStore(filepath.Join(dir, "no", "such", "r.jsonl"), "")
	assert.ErrorIs(t, err, ErrStorePath)
}

func TestJournalPathsAreSafeAndDistinct(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "st"))
	require.NoError(t, err)
	defer s.Close()
	seen := map[string]string{}
	for _, id := range []string{"a", "A", "a/b", "a_b", "../../etc/passwd", ".hidden", "ünï cödé", strings.Repeat("x", MaxIDBytes), strings.Repeat("x", MaxIDBytes-1) + "y"} {
		p := s.JournalPath(Job{ID: id})
		assert.Equal(t, filepath.Join(dir, "st"), filepath.Dir(p), "%q stays in the state folder", id)
		name := filepath.Base(p)
		assert.False(t, strings.HasPrefix(name, "."), "%q: no hidden file", id)
		assert.Regexp(t, `^[A-Za-z0-9._-]+\.jsonl$`, name)
		if prev, dup := seen[p]; dup {
			t.Errorf("ids %q and %q share %s", prev, id, p)
		}
		seen[p] = id
	}
	assert.Empty(t, s.JournalPath(Job{Line: 3}), "a job without an id has no journal")
	j, err := s.Journal(Job{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, filepath.Join("st", filepath.Base(j.Path())), s.Rel(j.Path()))
}

func FuzzScanResults(f *testing.F) {
	f.Add([]byte(`{"id":"a","line":1,"status":"solved"}` + "\n" + `{"line":2,"status":"invalid"}` + "\n" + `{"id":"b"`))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"id":"a","line":1,"status":"solved"}` + "\n" + `{"id":"a","line":1,"status":"solved"}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 8<<10 {
			return
		}
		rs, end, torn, err := scanResults(bytes.NewReader(b))
		if err != nil {
			require.ErrorIs(t, err, ErrResultsCorrupt)
			return
		}
		require.Equal(t, int64(len(b)), end+int64(torn), "whole lines plus the torn tail are the file")
		require.Equal(t, len(rs), bytes.Count(b[:end], []byte("\n")))
		keys := map[string]bool{}
		for _, r := range rs {
			require.False(t, keys[r.Key()])
			keys[r.Key()] = true
			require.True(t, r.Status.valid())
		}
		if torn > 0 {
			require.NotContains(t, string(b[end:]), "\n")
		}
	})
}

// halfWriter writes half of what it is given, then fails, as a full disk
// may.
type halfWriter struct{ *os.File }

func (h halfWriter) Write(b []byte) (int, error) {
	n, _ := h.File.Write(b[:len(b)/2])
	return n, errors.New("no space left on device")
}

func TestStoreFailedWriteLeavesNoHalfLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	s, err := OpenStore(out, "")
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Write(Result{ID: "a", Line: 1, Status: StatusSolved}))
	before := mustRead(t, out)
	s.out = halfWriter{s.f}
	err = s.Write(Result{ID: "b", Line: 2, Status: StatusSolved})
	require.ErrorContains(t, err, "no space left")
	assert.Equal(t, before, mustRead(t, out), "the half line was cut back")
	_, ok := s.Done(Job{ID: "b"})
	assert.False(t, ok, "a failed write records nothing")
	s.out = nil
	require.NoError(t, s.Write(Result{ID: "b", Line: 2, Status: StatusSolved}), "the next write appends after the whole lines")
	assert.Equal(t, 2, bytes.Count(mustRead(t, out), []byte("\n")))
	_, _, _, err = scanResults(bytes.NewReader(mustRead(t, out)))
	require.NoError(t, err)
}
