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

// threeDecisions writes a signed journal of three decisions and returns
// its bytes after each line (header first).
func threeDecisions(t *testing.T, path string, key []byte, unsigned bool) [][]byte {
	t.Helper()
	j, err := openJournal(path, testHeader("fp"), key, unsigned)
	require.NoError(t, err)
	snap := func() []byte { b, err := os.ReadFile(path); require.NoError(t, err); return b }
	got := [][]byte{snap()}
	for i, node := range []string{"r.0", "r.1", "r"} {
		require.NoError(t, j.record(Record{Node: node, Role: RoleSolve, Value: json.RawMessage([]byte{'1' + byte(i)})}))
		got = append(got, snap())
	}
	require.NoError(t, j.close())
	return got
}

// A signed journal cut back to whole lines (or an older copy put back) is
// refused and left as it was: the chain alone cannot see lines dropped at
// its end, the head in the state folder can.
func TestJournalCutBackIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	lines := threeDecisions(t, path, testKey, false)
	for _, keep := range []int{1, 2} { // records kept: an older copy, whole lines only
		require.NoError(t, os.WriteFile(path, lines[keep], 0o600))
		_, err := openJournal(path, testHeader("fp"), testKey, false)
		require.ErrorIs(t, err, ErrJournalRollback, "%d of 3 decisions kept", keep)
		assert.Contains(t, err.Error(), "cut back")
		after, _ := os.ReadFile(path)
		assert.Equal(t, lines[keep], after, "a refused journal is not changed")
	}
	// The whole journal, and the whole journal with a torn tail, open.
	require.NoError(t, os.WriteFile(path, append(bytes.Clone(lines[3]), `{"node":"r.2","ro`...), 0o600))
	j, err := openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	_, ok := j.lookup("r", RoleSolve, "")
	assert.True(t, ok)
	require.NoError(t, j.close())
}

// A kill between a line's sync and its head's write leaves the head a
// line behind: that journal opens, and its next record moves the head on.
func TestJournalHeadALineBehindOpens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j")
	j, err := openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	require.NoError(t, j.record(Record{Node: "r.0", Role: RoleSolve, Value: json.RawMessage(`1`)}))
	headFile := filepath.Join(j.heads, j.run+".json")
	behind, err := os.ReadFile(headFile)
	require.NoError(t, err)
	require.NoError(t, j.record(Record{Node: "r.1", Role: RoleSolve, Value: json.RawMessage(`2`)}))
	require.NoError(t, j.close())
	require.NoError(t, os.WriteFile(headFile, behind, 0o600))
	j, err = openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err, "a head one line behind is a kill's, not a cut")
	require.NoError(t, j.record(Record{Node: "r", Role: RoleSolve, Value: json.RawMessage(`3`)}))
	require.NoError(t, j.close())
	h, err := loadHead(filepath.Dir(headFile), j.run)
	require.NoError(t, err)
	assert.Equal(t, 4, h.Lines)
}

// Another copy of the run as long as its head, whose line at the head
// differs (two runs' copies mixed), is refused; so is a signed journal
// the state folder has no head for.
func TestJournalReplacedOrUnrecordedIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	a := threeDecisions(t, path, testKey, false)
	// The same header and chain key, other decisions: a copy the head
	// does not know.
	hdr, prev, err := readLine(a[3], 0)
	require.NoError(t, err)
	forged := bytes.Clone(hdr)
	for i, node := range []string{"r.0", "r.1", "r"} {
		line, sum, err := sealed(testKey, prev, Record{Node: node, Role: RoleSolve, Value: json.RawMessage([]byte{'7' + byte(i)})})
		require.NoError(t, err)
		forged, prev = append(forged, line...), sum
	}
	require.NoError(t, os.WriteFile(path, forged, 0o600))
	_, err = openJournal(path, testHeader("fp"), testKey, false)
	require.ErrorIs(t, err, ErrJournalRollback)
	assert.Contains(t, err.Error(), "replaced by another copy")

	require.NoError(t, os.WriteFile(path, a[3], 0o600))
	t.Setenv("MDAP_STATE_DIR", t.TempDir()) // a state folder without its head
	_, err = openJournal(path, testHeader("fp"), testKey, false)
	require.ErrorIs(t, err, ErrJournalRollback)
	assert.Contains(t, err.Error(), "no chain head")
	// A journal of its header alone (killed before its head was written) opens.
	require.NoError(t, os.WriteFile(path, a[0], 0o600))
	j, err := openJournal(path, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	require.NoError(t, j.close())
}

// readLine returns line n of data (with its newline) and its chain value.
func readLine(data []byte, n int) ([]byte, []byte, error) {
	line := bytes.SplitAfter(data, []byte("\n"))[n]
	_, sum, err := unseal(bytes.TrimSuffix(line, []byte("\n")))
	return line, sum, err
}

// An unsigned journal keeps no head: cut back, its lost decisions are
// decided again, as after a crash (what --journal-unsigned gives up).
func TestJournalUnsignedCutBackOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	lines := threeDecisions(t, path, nil, true)
	require.NoError(t, os.WriteFile(path, lines[1], 0o600))
	j, err := openJournal(path, testHeader("fp"), nil, true)
	require.NoError(t, err)
	defer j.close()
	_, ok := j.lookup("r.1", RoleSolve, "")
	assert.False(t, ok)
}

// A format-1 journal (no run id, no head) is refused with what to do.
func TestJournalOfAnEarlierFormatIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	line, _, err := sealed(nil, nil, header{Format: 1, Family: "sum", Input: json.RawMessage(`{"n":[1,2]}`), Fingerprint: "fp"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, line, 0o600))
	_, err = openJournal(path, testHeader("fp"), nil, true)
	require.ErrorIs(t, err, ErrJournalMismatch)
	assert.Contains(t, err.Error(), "start the run over")
}
