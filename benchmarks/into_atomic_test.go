package benchmarks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunIntoLeavesTheOlderReportOnAFailedWrite: a report that cannot be
// written whole leaves the older report.json (what a merge reads) as it
// was. Before each file was written in place with os.WriteFile and
// report.json came first, so a failure at REPORT.md left a new
// report.json beside an old REPORT.md, and one within report.json would
// have cut short the older report the merge was to keep.
func TestRunIntoLeavesTheOlderReportOnAFailedWrite(t *testing.T) {
	dir := t.TempDir()
	older := &Report{Command: "maker bench --suite scale", SuiteWall: map[string]string{"scale": "1s"},
		Scale: &ScaleResult{Rows: []ScaleRow{{Disks: 10, Solved: true}}}}
	require.NoError(t, older.WriteDir(dir))
	// REPORT.md cannot be replaced (a folder of that name; EACCES or
	// ENOSPC do the same to a file).
	require.NoError(t, os.Remove(filepath.Join(dir, ReportFile)))
	require.NoError(t, os.Mkdir(filepath.Join(dir, ReportFile), 0o755))

	_, _, err := RunInto(context.Background(), Options{Suites: []string{"matching"}, Quick: true, Seed: 1}, dir, true)
	require.Error(t, err, "REPORT.md cannot be written")
	back, err := ReadReport(dir)
	require.NoError(t, err)
	assert.Nil(t, back.Matching, "RunInto failed, yet report.json was replaced by this run's")
}
