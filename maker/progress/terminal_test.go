package progress

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY returns the terminal end of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0), "unlockpt")
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { pts.Close() })
	return pts
}

// Auto sees the terminal under the redacting writer that a command's
// stderr is.
func TestIsTerminalUnwrapsTheRedactingWriter(t *testing.T) {
	t.Parallel()
	pts := openPTY(t)
	assert.True(t, IsTerminal(pts))
	assert.True(t, IsTerminal(observe.RedactWriter(pts, &observe.Secrets{})), "a terminal under the redaction")
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(observe.RedactWriter(f, &observe.Secrets{})), "a file under it")
	assert.NotNil(t, NewBar(observe.RedactWriter(pts, &observe.Secrets{}), Auto, 10, "steps"), "the bar is shown")
	assert.Nil(t, NewBar(observe.RedactWriter(f, &observe.Secrets{}), Auto, 10, "steps"), "no bar in a file")
	assert.Nil(t, NewBar(pts, Off, 10, "steps"), "off: no bar on a terminal either")
	assert.NotNil(t, NewBar(f, On, 10, "steps"), "on: a bar in a file too")
}
