package calibrate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenTaskGivesItsStepsAndOracle: Towers of Hanoi and a spec file
// open as a Task whose steps, oracle and tools a calibration samples; a
// spec without a script is refused, closed.
func TestOpenTaskGivesItsStepsAndOracle(t *testing.T) {
	t.Parallel()
	h, err := calibrate.OpenHanoi(3)
	require.NoError(t, err)
	assert.Equal(t, 7, h.Steps.Total())
	assert.Equal(t, hanoi.Oracle{}, h.Oracle)
	require.NoError(t, h.Close())
	_, err = calibrate.OpenHanoi(0)
	assert.ErrorIs(t, err, hanoi.ErrConfig)

	s, err := calibrate.OpenSpec(filepath.Join("..", "..", "testdata", "spec", "find-version.json"), "", "")
	require.NoError(t, err)
	assert.Equal(t, 3, s.Steps.Total())
	assert.IsType(t, spec.Oracle{}, s.Oracle)
	require.NoError(t, s.Close())

	_, err = calibrate.OpenSpec(filepath.Join(t.TempDir(), "missing.json"), "", "")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
