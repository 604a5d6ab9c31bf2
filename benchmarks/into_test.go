package benchmarks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RunInto refuses an unknown suite and a report it cannot merge into
// before anything runs or is written; its MergeError says what
// ReadReport said.
func TestRunIntoRefusesBeforeRunning(t *testing.T) {
	dir := t.TempDir()
	_, _, err := RunInto(context.Background(), Options{Suites: []string{"matching", "speed"}}, dir, false)
	require.ErrorIs(t, err, ErrSuite)
	fe := fielderr.As(err)
	require.NotNil(t, fe)
	assert.Equal(t, "speed", fe.Fields[0].Value)
	assert.Equal(t, err, Options{Suites: []string{"speed"}}.Validate())

	_, _, err = RunInto(context.Background(), Options{Suites: []string{"matching"}, Quick: true}, dir, true)
	var me *MergeError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, readErr := ReadReport(dir)
	assert.Equal(t, readErr.Error(), err.Error(), "ReadReport's text")

	require.NoError(t, os.WriteFile(filepath.Join(dir, DataFile), []byte("not json"), 0o644))
	_, _, err = RunInto(context.Background(), Options{Suites: []string{"matching"}, Quick: true}, dir, true)
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, ErrNotReport)
	assert.NoFileExists(t, filepath.Join(dir, ReportFile))
}

// RunInto writes the run's report, and with merge keeps the suites of
// the older report the run did not run; ran names this run's suites only.
func TestRunIntoMerges(t *testing.T) {
	dir := t.TempDir()
	older := &Report{Command: "maker bench --suite scale", SuiteWall: map[string]string{"scale": "1s"},
		Scale: &ScaleResult{Rows: []ScaleRow{{Disks: 10, Solved: true}}}}
	require.NoError(t, older.WriteDir(dir))
	rep, ran, err := RunInto(context.Background(), Options{Suites: []string{"matching"}, Quick: true, Seed: 1}, dir, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"matching"}, ran)
	assert.Equal(t, []string{"scale", "matching"}, rep.Ran(), "the older suite kept")
	back, err := ReadReport(dir)
	require.NoError(t, err)
	assert.NotNil(t, back.Scale)
	assert.NotNil(t, back.Matching)

	var b strings.Builder
	require.NoError(t, rep.WriteSummary(&b, ran, dir))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	assert.True(t, strings.HasPrefix(lines[0], "bench: matching in "), lines[0])
	assert.True(t, strings.HasSuffix(lines[0], "; report in "+filepath.Join(dir, ReportFile)), lines[0])
	assert.Len(t, lines, 1+len(rep.Goals))
	for i, g := range rep.Goals {
		assert.Equal(t, "  ["+g.Met+"] "+g.Goal+": "+g.Measured, lines[1+i])
	}
	assert.Error(t, rep.WriteSummary(failingWriter{}, ran, dir))
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

// TestRunIntoKeepsTheSuitesThatFinished: a run that ends in its second
// suite (here cancelled as it starts) still writes the first suite's
// figures, merged with the older report; the unfinished suite is not in
// it, and RunInto returns the error with what it wrote. The decompose
// suite runs at TestDecomposeSuiteSmall's size: what is tested is which
// suites are kept, not their figures.
func TestRunIntoKeepsTheSuitesThatFinished(t *testing.T) {
	decomposeSizing = func(bool) decomposeSize { return tinyDecompose }
	defer func() { decomposeSizing = decomposeSizes }()
	dir := t.TempDir()
	older := &Report{Command: "maker bench --suite scale", SuiteWall: map[string]string{"scale": "1s"},
		Scale: &ScaleResult{Rows: []ScaleRow{{Disks: 10, Solved: true}}}}
	require.NoError(t, older.WriteDir(dir))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := Options{Suites: []string{"decompose", "matching"}, Quick: true, Seed: 1,
		Progress: func(suite string, _, _ int) {
			if suite == "matching" {
				cancel()
			}
		}}
	rep, ran, err := RunInto(ctx, o, dir, true)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep, "the finished suite is reported")
	assert.Equal(t, []string{"decompose"}, ran)
	back, err := ReadReport(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"scale", "decompose"}, back.Ran(), "the older suite kept, the finished one written, the cut one not")
	assert.NotNil(t, back.Decompose)
	assert.Nil(t, back.Matching, "a suite cut short leaves no figures")
}

// TestRunIntoWritesNothingWhenNoSuiteFinished: cut short in its first
// suite, a run leaves the older report as it was.
func TestRunIntoWritesNothingWhenNoSuiteFinished(t *testing.T) {
	dir := t.TempDir()
	older := &Report{Command: "maker bench --suite scale", SuiteWall: map[string]string{"scale": "1s"},
		Scale: &ScaleResult{Rows: []ScaleRow{{Disks: 10, Solved: true}}}}
	require.NoError(t, older.WriteDir(dir))
	before, err := os.ReadFile(filepath.Join(dir, DataFile))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, ran, err := RunInto(ctx, Options{Suites: []string{"matching"}, Quick: true, Seed: 1}, dir, false)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, rep)
	assert.Empty(t, ran)
	after, err := os.ReadFile(filepath.Join(dir, DataFile))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}
