package benchmarks

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadReportReadsWhatWriteDirWrote: a report written into a folder
// reads back with its suites, ready to merge into.
func TestReadReportReadsWhatWriteDirWrote(t *testing.T) {
	dir := t.TempDir()
	r := &Report{Command: "maker bench --suite scale", Started: time.Date(2026, 12, 2, 13, 54, 0, 0, time.UTC),
		SuiteWall: map[string]string{"scale": "43.9s", "fidelity": "2s"},
		Scale:     &ScaleResult{Rows: []ScaleRow{{Disks: 20, Wall: 15 * time.Second, Solved: true}}}}
	require.NoError(t, r.WriteDir(dir))
	got, err := ReadReport(dir)
	require.NoError(t, err)
	assert.Equal(t, r.Command, got.Command)
	assert.Equal(t, []string{"fidelity", "scale"}, got.Ran(), "in the order of Suites, not of the map")
	require.NotNil(t, got.Scale)
	assert.Equal(t, 20, got.Scale.Rows[0].Disks)
}

func TestReadReportRefusesWhatIsNotOne(t *testing.T) {
	_, err := ReadReport(t.TempDir())
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.NotErrorIs(t, err, ErrNotReport)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, DataFile), []byte("not json"), 0o644))
	_, err = ReadReport(dir)
	assert.ErrorIs(t, err, ErrNotReport)
	assert.ErrorContains(t, err, filepath.Join(dir, DataFile)+" is not a maker bench report: invalid character")
	assert.Empty(t, (&Report{}).Ran())
}
