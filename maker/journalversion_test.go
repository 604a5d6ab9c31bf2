package maker

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/journal"
)

// versioned is a counter with a version of its own rules.
type versioned struct {
	counter
	version string
}

func (v *versioned) TaskVersion() string { return v.version }

// TestJournalRecordsTheVersions: a new journal's header records the mdap
// version, this build's journal.DecisionVersion and the task's own version.
func TestJournalRecordsTheVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	_, err := journalRun(t, path, &versioned{counter{target: 2}, "counter/7"}, 0, nil, false)
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(mustRead(t, path)), "\n")
	assert.Contains(t, header, `"mdap":"`+mdapVersion()+`"`)
	assert.Contains(t, header, fmt.Sprintf(`"decisions":%d,`, journal.DecisionVersion))
	assert.Contains(t, header, `"task_version":"counter/7"`)
}

// TestResumeRefusedUnderOtherTaskRules: a journal begun under one version
// of the task's rules is refused for another (and for a task with none),
// naming both, and changes nothing; the same version resumes.
func TestResumeRefusedUnderOtherTaskRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	_, err := journalRun(t, path, &versioned{counter{target: 4}, "counter/1"}, 2, nil, false)
	require.Error(t, err, "stopped after step 1")
	before := mustRead(t, path)
	for _, c := range []struct {
		task Task
		want string
	}{
		{&versioned{counter{target: 4}, "counter/2"}, `the task's version: "counter/1" in the journal, "counter/2" now`},
		{&counter{target: 4}, `the task's version: "counter/1" in the journal, none now`},
	} {
		_, err := journalRun(t, path, c.task, 0, nil, true)
		require.ErrorIs(t, err, journal.ErrMismatch)
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), "could decide its next steps differently")
		assert.Equal(t, before, mustRead(t, path), "nothing written")
	}
	task := &versioned{counter{target: 4}, "counter/1"}
	_, err = journalRun(t, path, task, 0, nil, true)
	require.NoError(t, err)
	assert.Equal(t, 4, task.n)
}
