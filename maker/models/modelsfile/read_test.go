package modelsfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadModelsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "models.txt")
	require.NoError(t, os.WriteFile(path, []byte("sim\n# a comment\nopenai:gpt-4.1-mini\n"), 0o644))
	got, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"sim", "openai:gpt-4.1-mini"}, got)

	_, err = Read(filepath.Join(dir, "missing.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	big := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("# x\n", MaxBytes/4+1)), 0o644))
	_, err = Read(big)
	assert.ErrorIs(t, err, models.ErrSpec, "over MaxBytes")
}

// TestReadModelsFileRefusesAFIFOAtOnce: a FIFO nobody writes would block
// a plain open forever.
func TestReadModelsFileRefusesAFIFOAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(fifo); done <- err }()
	select {
	case err := <-done:
		assert.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocked on a FIFO")
	}
}

// Load reads stdin for "-", bounded as Read is, and a file otherwise.
func TestLoadReadsStdinForDash(t *testing.T) {
	t.Parallel()
	got, err := Load("-", strings.NewReader("sim\nopenai:gpt-4.1-mini\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"sim", "openai:gpt-4.1-mini"}, got)
	_, err = Load("-", strings.NewReader(strings.Repeat("#", MaxBytes+1)))
	require.ErrorIs(t, err, models.ErrSpec, "over MaxBytes")
	path := filepath.Join(t.TempDir(), "-models")
	require.NoError(t, os.WriteFile(path, []byte("sim\n"), 0o600))
	got, err = Load(path, strings.NewReader("openai:x\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"sim"}, got, "a path is the file, not stdin")
}
