package batch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReadTasks reads a file or stdin, and refuses one without a task.
func TestReadTasks(t *testing.T) {
	t.Parallel()
	jobs, err := batch.ReadTasks("-", strings.NewReader(`{"id": "h3", "hanoi": {"disks": 3}}`+"\n"), "")
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, "h3", jobs[0].ID)

	_, err = batch.ReadTasks("-", strings.NewReader("\n\n"), "")
	require.ErrorIs(t, err, batch.ErrNoTasks)
	assert.EqualError(t, err, `- has no tasks: write one JSON object per line, such as {"id": "h3", "hanoi": {"disks": 3}}`)

	path := filepath.Join(t.TempDir(), "tasks.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"id": "a", "hanoi": {"disks": 2}}`+"\n"+`{"id": "b", "hanoi": {"disks": 2}}`+"\n"), 0o600))
	jobs, err = batch.ReadTasks(path, nil, "")
	require.NoError(t, err)
	assert.Len(t, jobs, 2)
	_, err = batch.ReadTasks(filepath.Join(t.TempDir(), "missing.jsonl"), nil, "")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
