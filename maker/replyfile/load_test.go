package replyfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mdap-go/mdap/maker/replyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Load reads a file by its extension and stdin as JSON, and refuses what
// is no reply: a missing file, a FIFO (at once, not blocking), a reply
// over MaxBytes.
func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	calls := `[{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]`
	txt := filepath.Join(dir, "reply.txt")
	require.NoError(t, os.WriteFile(txt, []byte(calls), 0o600))
	r, err := replyfile.Load(txt, nil)
	require.NoError(t, err)
	assert.Empty(t, r.ToolCalls, "a .txt file is text")
	assert.Equal(t, calls, r.Text)

	r, err = replyfile.Load("-", strings.NewReader(calls))
	require.NoError(t, err)
	require.Len(t, r.ToolCalls, 1, "stdin is read as a .json file")

	_, err = replyfile.Load(filepath.Join(dir, "missing.txt"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "give a file holding one reply")

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err = replyfile.Load(fifo, nil)
	assert.Error(t, err, "a FIFO is refused without blocking")

	_, err = replyfile.Load("-", strings.NewReader(strings.Repeat("a", replyfile.MaxBytes+1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "- is over 16777216 bytes")
	r, err = replyfile.Load("-", strings.NewReader(strings.Repeat("a", replyfile.MaxBytes)))
	require.NoError(t, err, "MaxBytes itself is read")
	assert.Len(t, r.Text, replyfile.MaxBytes)

	_, err = replyfile.Load("-", strings.NewReader(`{"choices": []}`))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "-: "), "Read's error names the file: %v", err)
}
