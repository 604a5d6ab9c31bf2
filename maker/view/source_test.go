package view_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/view"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Open tells a journal from a state folder, applies the limits and reads
// what is there; a journal exports, a folder does not.
func TestOpenJournalOrFolder(t *testing.T) {
	t.Parallel()
	path, _, _ := realJournal(t, 5)
	src, err := view.Open(path, view.Limits{MaxCost: 2, Target: 0.9})
	require.NoError(t, err)
	defer src.Close()
	assert.False(t, src.IsFolder())
	cfg := src.Config()
	require.NotNil(t, cfg.Run)
	assert.Nil(t, cfg.Batch)
	st := cfg.Run.Stats()
	assert.Equal(t, 31, st.Steps, "read on open")
	assert.Equal(t, 2.0, st.CostCap)
	assert.Equal(t, 0.9, st.Target)
	out := t.TempDir()
	pngPath, htmlPath := filepath.Join(out, "m.png"), filepath.Join(out, "r.html")
	require.NoError(t, src.Export(pngPath, htmlPath))
	assert.FileExists(t, pngPath)
	assert.FileExists(t, htmlPath)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, src.Follow(ctx, 0), "nil when ctx ends")

	dir, results, _ := stateFolder(t)
	f, err := view.Open(dir, view.Limits{Results: results})
	require.NoError(t, err)
	defer f.Close()
	assert.True(t, f.IsFolder())
	require.NotNil(t, f.Config().Batch)
	assert.Nil(t, f.Config().Run)
	assert.NotEmpty(t, f.Config().Batch.Stats().List, "read on open")
	assert.ErrorIs(t, f.Export(filepath.Join(out, "x.png"), ""), view.ErrExportFolder)
	assert.NoFileExists(t, filepath.Join(out, "x.png"))
}

// Each refusal of Open is its own error, and nothing is exported from a
// journal without a header.
func TestOpenRefusals(t *testing.T) {
	t.Parallel()
	path, _, _ := realJournal(t, 3)
	for _, lim := range []view.Limits{{MaxCost: -1}, {Target: 1}, {Target: -0.5}} {
		_, err := view.Open(path, lim)
		fe := fielderr.As(err)
		require.NotNil(t, fe, "%+v: %v", lim, err)
		assert.ErrorIs(t, err, fielderr.ErrConfig)
	}
	_, err := view.Open(path, view.Limits{Results: "r.jsonl"})
	assert.ErrorIs(t, err, view.ErrResultsOfRun)
	_, err = view.Open(filepath.Join(t.TempDir(), "missing"), view.Limits{})
	assert.ErrorIs(t, err, view.ErrPath)
	assert.NotErrorIs(t, err, view.ErrResults, "the journal, not a results file, is what could not be read")
	// A state folder whose results file is a folder: ErrResults says which
	// path was wrong.
	state := t.TempDir()
	_, err = view.Open(state, view.Limits{Results: t.TempDir()})
	assert.ErrorIs(t, err, view.ErrPath)
	assert.ErrorIs(t, err, view.ErrResults)

	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	src, err := view.Open(empty, view.Limits{})
	require.NoError(t, err)
	defer src.Close()
	png := filepath.Join(t.TempDir(), "m.png")
	assert.ErrorIs(t, src.Export(png, ""), view.ErrNoHeader)
	assert.NoFileExists(t, png)
}

// WatchDecomposition shows a decomposition's journal as a batch of one
// running task, waits for a journal not written yet, and after stop
// holds what the journal held when stop was called.
func TestWatchDecomposition(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.jsonl")
	b, stop := view.WatchDecomposition(context.Background(), "multiply", path)
	task := func() view.BatchTask { return byName(b.Stats())["multiply"] }
	assert.Equal(t, view.StatusRunning, task().Status)
	assert.Equal(t, "multiply", task().Kind)
	appendLines(t, path,
		[]byte(`{"mdap_decompose":1,"family":"multiply","input":{"a":"12","b":"3"},"chain":"x"}`+"\n"),
		[]byte(`{"node":"r","role":"atomic","value":false,"samples":3,"cost":0.25,"wall_ns":1,"chain":"y"}`+"\n"),
		[]byte(`{"node":"r","role":"decompose","value":{},"samples":4,"cost":0.5,"wall_ns":1,"chain":"z"}`+"\n"))
	stop()
	assert.Equal(t, 7, task().Samples, "stop's last read is in")
	assert.Equal(t, 0.75, task().Cost)
	assert.Empty(t, task().Error)
}

// TestLimitsRefuseANaNOrInfiniteCap: a cap no cost can pass, or one NaN
// compares false with, is refused as a negative one is.
func TestLimitsRefuseANaNOrInfiniteCap(t *testing.T) {
	t.Parallel()
	for _, c := range []float64{math.NaN(), math.Inf(1), -1} {
		assert.Error(t, view.Limits{MaxCost: c}.Validate(), "MaxCost %v", c)
	}
	assert.NoError(t, view.Limits{MaxCost: 2.5}.Validate())
}
