package benchmarks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteSpendChartWholeAndPrivate: the chart is an SVG readable by its
// owner only; no spend writes no file.
func TestWriteSpendChartWholeAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spend.svg")
	require.NoError(t, WriteSpendChart(path, []SpendPoint{{Seconds: 0, Dollars: 0}, {Seconds: 2, Dollars: 0.5}}, 1, "the batch's spend"))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	empty := filepath.Join(t.TempDir(), "none.svg")
	assert.ErrorIs(t, WriteSpendChart(empty, nil, 1, "none"), ErrNoSpend)
	assert.NoFileExists(t, empty)
}
