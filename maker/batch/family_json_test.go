package batch

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFamilyJobSurvivesJSONRoundTrip: before the families registry
// a Job's "multiply"/"sort" problem was an exported field with a json tag,
// so json.Marshal of a Job (a library's own queue, a cache, a log) and
// json.Unmarshal back gave the same job. Family and FamilyInput are
// json:"-" and Job has UnmarshalJSON but no MarshalJSON: the problem is
// dropped, and the job comes back with no task.
func TestFamilyJobSurvivesJSONRoundTrip(t *testing.T) {
	jobs := readJobs(t, `{"id": "m", "multiply": {"a": "12", "b": "34"}, "k": 3}
{"id": "s", "sort": {"list": [3, 1, 2]}}`)
	for _, job := range jobs {
		require.NoError(t, job.Err)
		b, err := json.Marshal(job)
		require.NoError(t, err)
		var back Job
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, job.Kind(), back.Kind(), "kind after a round trip of %s", b)
		assert.JSONEq(t, string(job.FamilyInput), string(back.FamilyInput), "problem after a round trip of %s", b)
	}
}

// TestFamilyKeyIsCaseInsensitiveAsBefore: encoding/json matched the
// old Multiply/Sort fields case-insensitively, so a line with "Sort" (or
// "MULTIPLY") was a sort (multiply) task. UnmarshalJSON looks the family
// keys up exactly and the rest is decoded with DisallowUnknownFields: the
// same line is now "unknown field".
func TestFamilyKeyIsCaseInsensitiveAsBefore(t *testing.T) {
	jobs := readJobs(t, `{"id": "s", "Sort": {"list": [3, 1, 2]}}
{"ID": "m", "Multiply": {"a": "12", "b": "34"}}`)
	for i, want := range []string{"sort", "multiply"} {
		require.NoError(t, jobs[i].Err, "line %d", i+1)
		assert.Equal(t, want, jobs[i].Kind(), "line %d", i+1)
	}
}

// TestJobUnmarshalStaysLenientOutsideReadJobs: ReadJobs is strict
// about unknown keys through its own decoder; before UnmarshalJSON, a
// library's plain json.Unmarshal of a Job ignored keys it does not know,
// and a struct embedding Job got its own fields too. UnmarshalJSON always
// disallows unknown fields and, promoted to the embedding struct, decodes
// the whole object as a Job: both now fail or drop the outer fields.
func TestJobUnmarshalStaysLenientOutsideReadJobs(t *testing.T) {
	var job Job
	require.NoError(t, json.Unmarshal([]byte(`{"id": "h", "hanoi": {"disks": 3}, "note": "mine"}`), &job),
		"a plain json.Unmarshal ignores unknown keys")
	assert.Equal(t, "hanoi", job.Kind())

	var mine struct {
		Job
		Note string `json:"note"`
	}
	err := json.Unmarshal([]byte(`{"id": "h", "hanoi": {"disks": 3}, "note": "mine"}`), &mine)
	require.NoError(t, err, "a struct embedding Job")
	assert.Equal(t, "mine", mine.Note)
}
