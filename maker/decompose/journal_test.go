package decompose

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func testHeader(fp string) header {
	return header{Family: "sum", Input: json.RawMessage(`{"n":[1,2]}`), Fingerprint: fp}
}

func writeJournal(t *testing.T, path string, recs ...Record) {
	t.Helper()
	j, err := openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, j.record(r))
	}
	require.NoError(t, j.close())
}

func TestJournalReadsBackItsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	rec := Record{Node: "r.1", Role: RoleSolve, Value: json.RawMessage(`3`), Samples: 4}
	writeJournal(t, path, rec)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	j, err := openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	defer j.close()
	got, ok := j.lookup("r.1", RoleSolve, "")
	require.True(t, ok)
	assert.Equal(t, rec, got)
	_, ok = j.lookup("r.1", RoleCompose, "")
	assert.False(t, ok)
}

func TestJournalRefusesAnotherRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	writeJournal(t, path)
	before, _ := os.ReadFile(path)
	_, err := openJournal(path, testHeader("other"), testKey, false)
	assert.ErrorIs(t, err, ErrJournalMismatch)
	_, err = openJournal(path, testHeader("fp"), nil, true)
	assert.ErrorIs(t, err, ErrJournalMismatch, "a signed journal opened unsigned")
	_, err = openJournal(path, testHeader("fp"), []byte("another key 0123456789abcdef"), false)
	assert.ErrorIs(t, err, ErrJournalCorrupt, "a journal signed with another key")
	after, _ := os.ReadFile(path)
	assert.Equal(t, before, after, "a refused journal is not changed")
}

func TestJournalRefusesAnEditedLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	writeJournal(t, path, Record{Node: "r", Role: RoleSolve, Value: json.RawMessage(`3`)}, Record{Node: "r.0", Role: RoleSolve, Value: json.RawMessage(`1`)})
	data, _ := os.ReadFile(path)
	require.NoError(t, os.WriteFile(path, bytes.Replace(data, []byte(`"value":3`), []byte(`"value":4`), 1), 0o600))
	_, err := openJournal(path, testHeader("fp"), testKey, false)
	assert.ErrorIs(t, err, ErrJournalCorrupt)
}

func TestJournalDropsATornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	writeJournal(t, path, Record{Node: "r", Role: RoleSolve, Value: json.RawMessage(`3`)})
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	f.WriteString(`{"node":"r.0","role":"sol`)
	f.Close()
	j, err := openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	require.NoError(t, j.record(Record{Node: "r.0", Role: RoleSolve, Value: json.RawMessage(`1`)}))
	require.NoError(t, j.close())
	j, err = openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err, "the torn tail was cut before the next record")
	defer j.close()
	_, ok := j.lookup("r.0", RoleSolve, "")
	assert.True(t, ok)
}

func TestJournalLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	defer j.close()
	_, err = openJournal(path, testHeader("fp"), testKey, false)
	assert.ErrorIs(t, err, ErrJournalLocked)
}

func TestJournalUnsignedOnlyWithTheOptOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := openJournal(path, testHeader("fp"), nil, true)
	require.NoError(t, err)
	require.NoError(t, j.close())
	_, err = openJournal(path, testHeader("fp"), testKey, false)
	assert.ErrorIs(t, err, ErrJournalMismatch)
}

func TestJournalKeyFromTheStateFolder(t *testing.T) {
	t.Setenv("MDAP_JOURNAL_KEY", "")
	t.Setenv("MDAP_STATE_DIR", t.TempDir())
	k1, err := journalKey(nil)
	require.NoError(t, err)
	k2, err := journalKey(nil)
	require.NoError(t, err)
	assert.Equal(t, k1, k2, "made once, then read")
	assert.Len(t, k1, 32)
	_, err = journalKey([]byte("short"))
	assert.ErrorIs(t, err, ErrJournalKey)
}
