package maker

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/vote"
)

// versioned is a counter with a version of its own rules.
type versioned struct {
	counter
	version string
}

func (v *versioned) TaskVersion() string { return v.version }

// TestJournalRecordsTheVersions: a new journal's header records the mdap
// version, this build's DecisionVersion and the task's own version.
func TestJournalRecordsTheVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	_, err := journalRun(t, path, &versioned{counter{target: 2}, "counter/7"}, 0, nil, false)
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(mustRead(t, path)), "\n")
	assert.Contains(t, header, `"mdap":"`+mdapVersion()+`"`)
	assert.Contains(t, header, fmt.Sprintf(`"decisions":%d,`, DecisionVersion))
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
		require.ErrorIs(t, err, ErrJournalMismatch)
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), "could decide its next steps differently")
		assert.Equal(t, before, mustRead(t, path), "nothing written")
	}
	task := &versioned{counter{target: 4}, "counter/1"}
	_, err = journalRun(t, path, task, 0, nil, true)
	require.NoError(t, err)
	assert.Equal(t, 4, task.n)
}

// TestResumeRefusedUnderOtherDecisionRules: a journal begun by a build
// whose DecisionVersion differs is refused, naming both versions, the
// build that began it, and what changed since.
func TestResumeRefusedUnderOtherDecisionRules(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	c := newChain(key)
	header := c.seal([]byte(fmt.Sprintf(`{"mdap_journal":%d,"run":"%032d","mdap":"v0.9.0","decisions":%d,"task":"counter:3","settings":{},"keyed":true}`,
		JournalVersion, 5, DecisionVersion-1)))
	store := &memStore{lines: [][]byte{header}}
	j, err := NewJournalKey(store, key)
	require.NoError(t, err, "a header alone without a head: a crash at its start")
	old := decisionChanges[DecisionVersion]
	decisionChanges[DecisionVersion] = "red flags count a reply cut at the cap"
	defer func() { decisionChanges[DecisionVersion] = old }()
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), &counter{target: 3})
	require.ErrorIs(t, err, ErrJournalMismatch)
	msg := err.Error()
	assert.Contains(t, msg, fmt.Sprintf("version %d (mdap v0.9.0) in the journal, version %d (mdap %s) in this build", DecisionVersion-1, DecisionVersion, mdapVersion()))
	assert.Contains(t, msg, fmt.Sprintf("version %d: red flags count a reply cut at the cap", DecisionVersion))
	assert.Len(t, store.lines, 1, "nothing written")
}
