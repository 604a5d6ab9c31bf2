package journal

import (
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalStepLineIsTheRecordsJSON: a step's line holds the record as
// encoding/json writes it, and reads back as the same record.
func TestJournalStepLineIsTheRecordsJSON(t *testing.T) {
	store := &statetest.MemStore{}
	j, err := New(store)
	require.NoError(t, err)
	require.NoError(t, j.Begin(Run{Fingerprint: "t", Settings: json.RawMessage(`{"k":3}`)}))
	correct := 1
	rec := &StepRecord{Step: 0, K: 3, Key: "00000000000000ab", Votes: map[string]int{"00000000000000ab": 3, "1": 1},
		Winner:  intent.Output{Value: map[string]any{"move": []any{json.Number("1"), json.Number("0"), json.Number("2")}, "note": "<é>\u2028"}},
		Flags:   map[string]int{"format": 2},
		Correct: &correct, Contested: true, Elapsed: 12345}
	before := len(store.Stored)
	require.NoError(t, j.Step(rec))
	require.NoError(t, j.Flush())
	require.Len(t, store.Stored, before+1)
	want, err := json.Marshal(rec)
	require.NoError(t, err)
	line := store.Stored[before]
	require.True(t, len(line) > len(want))
	// The chain's field replaces the object's closing brace.
	assert.Equal(t, string(want[:len(want)-1])+",", string(line[:len(want)]), "the record's JSON, then the chain")
	var back StepRecord
	require.NoError(t, json.Unmarshal(want, &back))
	assert.Equal(t, rec.Votes, back.Votes)
	assert.Equal(t, rec.Key, back.Key)
	assert.Equal(t, *rec.Correct, *back.Correct)
}

// TestJournalRefusesAWinnerItCannotEncode: a winner that contains itself
// (a task's Decode may build one) or holds a value JSON cannot carry is
// an error naming the journal, never an endless recursion, and writes no
// line.
func TestJournalRefusesAWinnerItCannotEncode(t *testing.T) {
	cyclic := map[string]any{"a": json.Number("1")}
	cyclic["self"] = cyclic
	list := []any{json.Number("1"), nil}
	list[1] = list
	for name, v := range map[string]any{"object": cyclic, "list": list, "func": map[string]any{"f": func() {}}} {
		store := &statetest.MemStore{}
		j, err := New(store)
		require.NoError(t, err)
		require.NoError(t, j.Begin(Run{Fingerprint: "t", Settings: json.RawMessage(`{"k":3}`)}))
		before := len(store.Stored)
		err = j.Step(&StepRecord{K: 3, Winner: intent.Output{Value: v}})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "journal mem", name)
		if name != "func" {
			assert.Contains(t, err.Error(), "cycle", name)
		}
		require.NoError(t, j.Flush())
		assert.Len(t, store.Stored, before, name)
	}
}
