package decompose

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memStore is a journal.Store in memory, as the engine's is to the
// journal: whole lines, kept on Sync; closes counts its Close calls.
type memStore struct {
	lines  [][]byte
	closes int
}

func (m *memStore) Name() string { return "mem" }
func (m *memStore) Lines(from int, fn func(int, []byte) error) error {
	for i := from; i < len(m.lines); i++ {
		if err := fn(i, m.lines[i]); err != nil {
			return err
		}
	}
	return nil
}
func (m *memStore) Torn() []byte { return nil }
func (m *memStore) Append(line []byte) error {
	m.lines = append(m.lines, append([]byte{}, line...))
	return nil
}
func (m *memStore) Flush() error { return nil }
func (m *memStore) Sync() error  { return nil }
func (m *memStore) Reset() error { m.lines = nil; return nil }
func (m *memStore) Close() error { m.closes++; return nil }

// A journal kept in a store of the caller's reads back its records and
// its chain as a file's does, and is refused for another run.
func TestJournalInAStore(t *testing.T) {
	st := &memStore{}
	j, err := openJournalOn(storeLines{st}, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	rec := Record{Node: "r.1", Role: RoleSolve, Value: json.RawMessage(`3`), Samples: 4}
	require.NoError(t, j.record(rec))
	require.NoError(t, j.close())
	require.Len(t, st.lines, 2, "a header and the record, one line each")
	assert.NotContains(t, string(st.lines[1]), "\n", "a store holds lines without their newline")

	j, err = openJournalOn(storeLines{st}, testHeader("fp"), testKey, false)
	require.NoError(t, err)
	got, ok := j.lookup("r.1", RoleSolve, "")
	require.True(t, ok)
	assert.Equal(t, rec, got)
	require.NoError(t, j.close())

	_, err = openJournalOn(storeLines{st}, testHeader("other"), testKey, false)
	assert.ErrorIs(t, err, ErrJournalMismatch)
	st.lines[1][len(st.lines[1])-5] ^= 1 // a changed chain value
	_, err = openJournalOn(storeLines{st}, testHeader("fp"), testKey, false)
	assert.ErrorIs(t, err, ErrJournalCorrupt)
	assert.Equal(t, 4, st.closes, "closed by the journal, and on every refusal")
}

// Solve owns Config.JournalStore: it closes it when it refuses the run
// before the journal opens (a problem that is not one; a journal file
// given too).
func TestSolveClosesTheJournalStore(t *testing.T) {
	st := &memStore{}
	_, err := Solve(context.Background(), numFamily{}, json.RawMessage(`"not a list"`), Config{JournalStore: st})
	require.ErrorIs(t, err, ErrInput)
	assert.Equal(t, 1, st.closes)
	_, err = Solve(context.Background(), numFamily{}, json.RawMessage(`{"n": [1, 2]}`), Config{JournalStore: st, Journal: filepath.Join(t.TempDir(), "j")})
	require.ErrorIs(t, err, ErrConfig)
	assert.Equal(t, 2, st.closes)
	assert.Empty(t, st.lines, "nothing written")
}
