package journal

import (
	"fmt"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalDefaultWriteEveryWritesSlowSteps: with WriteEvery left at 0
// (DefaultWriteEvery), a step that ends more than DefaultWriteEvery after
// the last write is written to the store before the next starts (WriteEvery < 0
// meaning "never by time" and 0 meaning the default). The last write is
// moved an hour back before each step instead of waiting.
func TestJournalDefaultWriteEveryWritesSlowSteps(t *testing.T) {
	store := &flushCounter{}
	j, err := New(store)
	require.NoError(t, err)
	require.Zero(t, j.WriteEvery)
	require.NoError(t, j.Begin(Run{Fingerprint: "t", Settings: []byte(`{}`)}))
	for i := range 10 {
		j.written = time.Now().Add(-time.Hour) // as if the step took an hour
		before := store.flushes
		require.NoError(t, j.Step(&StepRecord{Step: i, K: 3}))
		assert.Equal(t, before+1, store.flushes, "step %d is written", i)
	}
	require.NoError(t, j.Close())
}

// flushCounter is a store in memory that counts its writes (Flush).
type flushCounter struct {
	statetest.MemStore
	flushes int
}

func (s *flushCounter) Flush() error { s.flushes++; return nil }

// TestResumeRefusedUnderOtherDecisionRules: a journal begun by a build
// whose DecisionVersion differs is refused, naming both versions, the
// build that began it, and what changed since.
func TestResumeRefusedUnderOtherDecisionRules(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	c := newChain(key)
	header := c.seal([]byte(fmt.Sprintf(`{"mdap_journal":%d,"run":"%032d","mdap":"v0.9.0","decisions":%d,"task":"counter:3","settings":{},"keyed":true}`,
		Version, 5, DecisionVersion-1)))
	store := &statetest.MemStore{Stored: [][]byte{header}}
	t.Setenv(KeyEnv, string(key))
	j, err := New(store)
	require.NoError(t, err, "a header alone without a head: a crash at its start")
	old := decisionChanges[DecisionVersion]
	decisionChanges[DecisionVersion] = "red flags count a reply cut at the cap"
	defer func() { decisionChanges[DecisionVersion] = old }()
	err = j.Check(Run{Fingerprint: "counter:3"})
	require.ErrorIs(t, err, ErrMismatch)
	msg := err.Error()
	assert.Contains(t, msg, fmt.Sprintf("version %d (mdap v0.9.0) in the journal, version %d (mdap %s) in this build", DecisionVersion-1, DecisionVersion, mdapVersion()))
	assert.Contains(t, msg, fmt.Sprintf("version %d: red flags count a reply cut at the cap", DecisionVersion))
	assert.Len(t, store.Stored, 1, "nothing written")
}
