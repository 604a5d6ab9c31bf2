package view

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WriteFile writes the whole file 0600 or leaves what was there: a write
// that fails leaves the older file and no temporary one.
func TestWriteFileWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "map.png")
	require.NoError(t, WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "first", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	boom := errors.New("disk full")
	err = WriteFile(path, func(w io.Writer) error { _, _ = io.WriteString(w, "half"); return boom })
	require.ErrorIs(t, err, boom)
	assert.NotErrorIs(t, err, ErrExportPath)
	b, _ = os.ReadFile(path)
	assert.Equal(t, "first", string(b), "the older file is as it was")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")

	err = WriteFile(filepath.Join(dir, "missing", "map.png"), func(io.Writer) error { return nil })
	assert.ErrorIs(t, err, ErrExportPath)
}

// ListenGuarded guards a view by the token given, or a generated one;
// without a token only on loopback; a bad token or address is refused
// before anything listens.
func TestListenGuarded(t *testing.T) {
	t.Parallel()
	g, err := ListenGuarded("127.0.0.1:0", "", false)
	require.NoError(t, err)
	assert.True(t, g.Generated)
	assert.NoError(t, CheckToken(g.Token))
	require.NoError(t, g.Close())

	g, err = ListenGuarded("127.0.0.1:0", "a-token-of-the-user-0123", false)
	require.NoError(t, err)
	assert.False(t, g.Generated)
	assert.Equal(t, "a-token-of-the-user-0123", g.Token)
	require.NoError(t, g.Close())

	g, err = ListenGuarded("127.0.0.1:0", "ignored-when-no-auth-0123", true)
	require.NoError(t, err)
	assert.Empty(t, g.Token, "no auth: no token")
	require.NoError(t, g.Close())

	_, err = ListenGuarded("0.0.0.0:0", "", true)
	assert.ErrorIs(t, err, ErrNoAuthRemote)
	_, err = ListenGuarded("127.0.0.1:0", "short", false)
	assert.ErrorIs(t, err, ErrToken)
	_, err = ListenGuarded("127.0.0.1", "", false)
	assert.ErrorIs(t, err, ErrAddr)
}

// Guarded.Serve serves the view behind the listener's token and says
// the page's address; its Close closes the listener.
func TestGuardedServe(t *testing.T) {
	t.Parallel()
	g, err := ListenGuarded("127.0.0.1:0", "", false)
	require.NoError(t, err)
	srv, url := g.Serve(Config{Run: NewRun(Info{Task: "t", Model: "m"})})
	assert.Equal(t, "http://"+g.Addr().String()+"/", url)
	status := func(token string) int {
		req, _ := http.NewRequest(http.MethodGet, url+"state", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, status("not-the-token-0123"))
	assert.Equal(t, http.StatusOK, status(g.Token))
	require.NoError(t, srv.Close())
	_, err = http.Get(url)
	assert.Error(t, err, "closed")
	assert.Panics(t, func() { g.Serve(Config{}) }, "no Run, no Batch: a caller's bug")
}
