package batch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readJobs(t *testing.T, text string) []Job {
	t.Helper()
	jobs, err := ReadJobs(strings.NewReader(text), "/tasks")
	require.NoError(t, err)
	return jobs
}

func TestReadJobsGoodLines(t *testing.T) {
	jobs := readJobs(t, "\ufeff"+`{"id": "v1", "spec": "specs/find.json", "k": 5, "root": "repo", "tools": "read_only", "seed": 7, "max_steps": 9, "max_samples": 50, "max_errors": 0}`+"\r\n"+
		"\n   \n"+
		`{"id": "h", "hanoi": {"disks": 12}}`+"\n"+
		`{"id": "c", "task": {"anything": [1, 2]}, "spec": ""}`) // no final newline
	require.Len(t, jobs, 3)
	for _, j := range jobs {
		require.NoError(t, j.Err)
	}
	v := jobs[0]
	assert.Equal(t, 1, v.Line)
	assert.Equal(t, "v1", v.ID)
	assert.Equal(t, "spec", v.Kind())
	assert.Equal(t, "/tasks/specs/find.json", v.Path(v.Spec))
	assert.Equal(t, "/tasks/repo", v.Path(*v.Root))
	assert.Equal(t, "/abs", v.Path("/abs"))
	assert.Equal(t, 5, *v.K)
	assert.Equal(t, "read_only", *v.Tools)
	assert.Equal(t, uint64(7), *v.Seed)
	assert.Equal(t, 9, *v.MaxSteps)
	assert.Equal(t, 50, *v.MaxSamples)
	assert.Equal(t, 0, *v.MaxErrors)
	assert.Equal(t, "id:v1", v.Key())

	h := jobs[1]
	assert.Equal(t, 4, h.Line, "blank lines are skipped but counted")
	assert.Equal(t, "hanoi", h.Kind())
	assert.Equal(t, 12, h.Hanoi.Disks)
	assert.Nil(t, h.K)
	assert.Equal(t, "task", jobs[2].Kind())
	assert.JSONEq(t, `{"anything": [1, 2]}`, string(jobs[2].Task))
	assert.Equal(t, 5, jobs[2].Line)
}

// badLines are the kinds of bad line, each with what its error must say.
var badLines = []struct {
	name, line string
	want       []string
	id         string // the id the invalid job keeps, if any
}{
	{"malformed JSON", `{"id": "a", "hanoi": {"disks": 3}`, []string{"malformed JSON"}, ""},
	{"not an object", `[1, 2]`, []string{"JSON object"}, ""},
	{"unknown field", `{"id": "u", "hanoi": {"disks": 3}, "colour": 1}`, []string{`unknown field "colour"`, "the fields are id, spec"}, "u"},
	{"unknown nested field", `{"id": "n", "hanoi": {"disks": 3, "pegs": 4}}`, []string{`unknown field "pegs"`}, "n"},
	{"wrong type", `{"id": "w", "hanoi": {"disks": "3"}}`, []string{`"hanoi.disks" is string`, "whole number"}, "w"},
	{"no id", `{"hanoi": {"disks": 3}}`, []string{`no "id"`}, ""},
	{"empty id", `{"id": "", "hanoi": {"disks": 3}}`, []string{`no "id"`}, ""},
	{"control in id", `{"id": "a\u0007b", "hanoi": {"disks": 3}}`, []string{"control or invisible"}, ""},
	{"long id", `{"id": "` + strings.Repeat("x", MaxIDBytes+1) + `", "hanoi": {"disks": 3}}`, []string{"bytes long"}, ""},
	{"no task", `{"id": "t"}`, []string{"no task"}, "t"},
	{"two tasks", `{"id": "2", "spec": "a.json", "hanoi": {"disks": 3}}`, []string{"more than one task"}, "2"},
	{"disks out of range", `{"id": "d", "hanoi": {"disks": 31}}`, []string{"use 1 to 30"}, "d"},
	{"k out of range", `{"id": "k", "hanoi": {"disks": 3}, "k": 0}`, []string{`"k" is 0`}, "k"},
	{"negative errors", `{"id": "e", "hanoi": {"disks": 3}, "max_errors": -1}`, []string{`"max_errors" is -1`}, "e"},
	{"zero samples", `{"id": "s", "hanoi": {"disks": 3}, "max_samples": 0}`, []string{`"max_samples" is 0`}, "s"},
	{"zero steps", `{"id": "z", "hanoi": {"disks": 3}, "max_steps": 0}`, []string{`"max_steps" is 0`}, "z"},
	{"empty root", `{"id": "r", "spec": "a.json", "root": ""}`, []string{`"root" is empty`}, "r"},
	{"empty tools", `{"id": "o", "spec": "a.json", "tools": " "}`, []string{`"tools" is empty`}, "o"},
	{"null task", `{"id": "nt", "task": null}`, []string{`"task" is null`}, "nt"},
	{"two values", `{"id": "x", "hanoi": {"disks": 3}} {"id": "y"}`, []string{"more than one JSON value"}, ""},
	{"duplicate id", `{"id": "good", "hanoi": {"disks": 4}}`, []string{`id "good" is already used by line 1`}, ""},
	{"too long", `{"id": "big", "spec": "` + strings.Repeat("a", MaxLineBytes) + `"}`, []string{"longer than 65536 bytes"}, ""},
}

func TestReadJobsBadLines(t *testing.T) {
	for _, c := range badLines {
		t.Run(c.name, func(t *testing.T) {
			jobs := readJobs(t, `{"id": "good", "hanoi": {"disks": 3}}`+"\n"+c.line+"\n"+`{"id": "after", "hanoi": {"disks": 2}}`+"\n")
			require.Len(t, jobs, 3)
			require.NoError(t, jobs[0].Err)
			require.NoError(t, jobs[2].Err, "a bad line does not spoil the next")
			assert.Equal(t, 3, jobs[2].Line)
			bad := jobs[1]
			require.ErrorIs(t, bad.Err, ErrJob)
			assert.Contains(t, bad.Err.Error(), "line 2", "the error names the line")
			for _, w := range c.want {
				assert.Contains(t, bad.Err.Error(), w)
			}
			assert.Equal(t, c.id, bad.ID)
			if c.id == "" {
				assert.Equal(t, "line:2", bad.Key())
			} else {
				assert.Equal(t, "id:"+c.id, bad.Key())
			}
		})
	}
}

func TestReadJobsInvalidLineKeepsItsIDAgainstLaterDuplicates(t *testing.T) {
	jobs := readJobs(t, `{"id": "a", "hanoi": {"disks": 3}, "extra": 1}`+"\n"+`{"id": "a", "hanoi": {"disks": 3}}`)
	require.Len(t, jobs, 2)
	assert.Equal(t, "a", jobs[0].ID)
	assert.ErrorContains(t, jobs[1].Err, `id "a" is already used by line 1`)
	assert.Empty(t, jobs[1].ID, "a duplicate never takes the id's key")
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("disk on fire")
	}
	r.n = 0
	return copy(p, `{"id":"a","hanoi":{"disks":3}}`+"\n"), nil
}

func TestReadJobsReaderError(t *testing.T) {
	_, err := ReadJobs(&failingReader{n: 1}, ".")
	assert.ErrorContains(t, err, "disk on fire")
}

func TestReadJobsFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(`{"id": "a", "spec": "s.json"}`+"\n"), 0o644))
	jobs, err := ReadJobsFile(p)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "s.json"), jobs[0].Path(jobs[0].Spec))
	_, err = ReadJobsFile(filepath.Join(dir, "missing.jsonl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = ReadJobsFile(dir)
	assert.ErrorContains(t, err, "not a regular file")
}

func FuzzReadJobs(f *testing.F) {
	f.Add([]byte(`{"id": "a", "hanoi": {"disks": 3}}` + "\n" + `{"id": "b", "spec": "x.json", "k": 2}`))
	f.Add([]byte(`{"id": "a", "task": {}}` + "\r\n\n" + `{"id": "a", "hanoi": {"disks": 3}}`))
	f.Add([]byte("\ufeff{\"id\":1}\n[]\n{\"id\":\"x\",\"seed\":-1}"))
	for _, c := range badLines {
		if len(c.line) < 1000 {
			f.Add([]byte(c.line))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 8<<10 {
			return
		}
		jobs, err := ReadJobs(bytes.NewReader(b), "d")
		require.NoError(t, err)
		lines := bytes.Count(b, []byte("\n")) + 1
		require.LessOrEqual(t, len(jobs), lines)
		ids := map[string]bool{}
		last := 0
		for _, j := range jobs {
			require.Greater(t, j.Line, last, "lines in order")
			last = j.Line
			if j.ID != "" {
				require.False(t, ids[j.ID], "a duplicate id kept its id")
				ids[j.ID] = true
				require.True(t, utf8.ValidString(j.ID))
				require.LessOrEqual(t, len(j.ID), MaxIDBytes)
			}
			if j.Err != nil {
				require.ErrorIs(t, j.Err, ErrJob)
				require.Contains(t, j.Err.Error(), fmt.Sprintf("line %d", j.Line))
				continue
			}
			require.NotEmpty(t, j.ID)
			require.Contains(t, []string{"spec", "hanoi", "task"}, j.Kind())
			n := 0
			for _, set := range []bool{j.Spec != "", j.Hanoi != nil, j.Task != nil} {
				if set {
					n++
				}
			}
			require.Equal(t, 1, n, "exactly one task")
		}
	})
}
