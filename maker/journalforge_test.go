package maker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forge is the attack of issue 35 case 7: edit a step's winner and
// recompute the journal's SHA-256 chain over every line, as a 40-line
// script does; keyed is whether the forged header still says it is
// signed.
func forge(t *testing.T, lines []string, keyed bool) string {
	t.Helper()
	forged := append([]string(nil), lines...)
	require.Contains(t, forged[2], `"next":2`)
	forged[2] = strings.Replace(forged[2], `"next":2`, `"next":9`, 1)
	if !keyed {
		forged[0] = strings.Replace(forged[0], `,"keyed":true`, ``, 1)
	}
	return reseal(t, forged, nil)
}

// TestForgedJournalRefusedByDefault: with no key configured anywhere (the
// default: the state folder's key, made on first use), a journal whose
// winner was edited and whose chain was recomputed is refused on resume,
// whether the forger keeps the header's signed mark (the HMAC does not
// fit at line 1) or drops it (an unsigned journal needs the opt-out), and
// the file is left as it was. Only journal.Unsigned accepts the unmarked
// forgery, as documented: it is what opting out means.
func TestForgedJournalRefusedByDefault(t *testing.T) {
	t.Setenv(journal.KeyEnv, "")
	dir := t.TempDir()
	path := filepath.Join(dir, "j")
	orig := finished(t, path, 3)
	require.Contains(t, orig[0], `"keyed":true`, "signed by default")
	require.Regexp(t, `"run":"[0-9a-f]{32}"`, orig[0], "a run id in the header")

	for _, keyed := range []bool{true, false} {
		content := forge(t, orig, keyed)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		_, task, err := chainOutcome(t, path)
		require.Error(t, err, "keyed mark %v", keyed)
		if keyed {
			require.ErrorIs(t, err, journal.ErrCorrupt)
			assert.Contains(t, err.Error(), path+":1 ")
		} else {
			require.ErrorIs(t, err, journal.ErrKey)
			assert.Contains(t, err.Error(), "--journal-unsigned")
		}
		assert.Zero(t, task.n, "nothing replayed")
		assert.Equal(t, content, string(mustRead(t, path)))
	}
	// Even the opt-out refuses it: the state folder recorded the run as
	// signed.
	_, task, err := chainOutcome(t, path, journal.Unsigned())
	require.ErrorIs(t, err, journal.ErrRollback)
	assert.Contains(t, err.Error(), "was signed")
	assert.Zero(t, task.n)
}

// TestRolledBackJournalRefused: an older copy of a signed journal put
// back after the run went on (fewer lines than the recorded head), and
// a copy whose line at the head differs, are refused with
// journal.ErrRollback; the current copy resumes.
func TestRolledBackJournalRefused(t *testing.T) {
	t.Setenv(journal.KeyEnv, "")
	dir := t.TempDir()
	path := filepath.Join(dir, "j")
	task := &snapCounter{counter: counter{target: 6}}
	_, err := journalRun(t, path, task, 4, func(j *journal.Journal) { j.CheckpointEvery = 3 }, false)
	require.Error(t, err, "stopped after step 3")
	older := mustRead(t, path)
	_, err = journalRun(t, path, &snapCounter{counter: counter{target: 6}}, 0, func(j *journal.Journal) { j.CheckpointEvery = 3 }, true)
	require.NoError(t, err)
	newer := mustRead(t, path)
	require.Greater(t, len(newer), len(older))

	require.NoError(t, os.WriteFile(path, older, 0o600))
	_, rtask, err := chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrRollback)
	assert.Contains(t, err.Error(), "an older copy was put back")
	assert.Zero(t, rtask.n)
	assert.Equal(t, older, mustRead(t, path))

	require.NoError(t, os.WriteFile(path, newer, 0o600))
	_, _, err = chainOutcome(t, path)
	require.NoError(t, err, "the current copy resumes")

	// A head whose line differs: the journal was replaced.
	lines := strings.SplitAfter(string(newer), "\n")
	var h journalHeader
	require.NoError(t, json.Unmarshal(unseal([]byte(strings.TrimSuffix(lines[0], "\n"))), &h))
	state, err := journal.StateDir()
	require.NoError(t, err)
	require.NoError(t, saveHead(state, h.Run, chainHead{Lines: 3, Chain: strings.Repeat("0", 64)}))
	_, _, err = chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrRollback)
	assert.Contains(t, err.Error(), path+":3 is not the line recorded")

	// No head at all: not written with this state folder.
	require.NoError(t, os.Remove(headPath(state, h.Run)))
	_, _, err = chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrRollback)
	assert.Contains(t, err.Error(), "has no record of")

	// The header alone and no head: a crash between the header's sync and
	// its head's write (a SIGKILL found it in maker solve); no step to
	// roll back, so the run goes on, from its first step.
	require.NoError(t, os.WriteFile(path, []byte(lines[0]), 0o600))
	rep, rtask, err := chainOutcome(t, path)
	require.NoError(t, err)
	assert.Zero(t, rep.Resumed)
	assert.Equal(t, 6, rtask.n)
	_, err = os.Stat(headPath(state, h.Run))
	require.NoError(t, err, "its head is recorded when it closes")
}

// TestHeaderAloneResumedSurvivesASecondCrash: a run killed between its
// header's sync and its head's write leaves the header alone and no head
// (accepted above). The run that resumes it must record the head before
// its first step, or a second kill, once steps are written, leaves a
// journal with steps and no head, refused as "not written with this state
// folder": the failure `maker solve` met after two SIGKILLs
// (TestBinarySolveKilledTwiceEndsWithTheUninterruptedResults, kill seed
// 1796513799163488357: "1 of 12 tasks not solved (1 failed)").
func TestHeaderAloneResumedSurvivesASecondCrash(t *testing.T) {
	t.Setenv(journal.KeyEnv, "")
	t.Setenv(journal.StateDirEnv, filepath.Join(t.TempDir(), "state"))
	state, err := journal.StateDir()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "j")
	want, err := journalRun(t, path, &snapCounter{counter: counter{target: 6}}, 0, nil, false)
	require.NoError(t, err)
	header := strings.SplitAfter(string(mustRead(t, path)), "\n")[0]
	var h journalHeader
	require.NoError(t, json.Unmarshal(unseal([]byte(strings.TrimSuffix(header, "\n"))), &h))
	require.NoError(t, os.WriteFile(path, []byte(header), 0o600))
	require.NoError(t, os.Remove(headPath(state, h.Run)), "the first crash: the head never written")

	// The resumed run is killed after three steps: what the disk holds
	// then is the journal as flushed and the head as recorded.
	j, err := journalfile.Open(path)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var journalAtKill []byte
	var headAtKill []byte
	var flushErr error
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}, Journal: j,
		Progress: func(e Event) {
			if e.Step == 2 && journalAtKill == nil {
				flushErr = j.Flush() // as the periodic write does
				journalAtKill, _ = os.ReadFile(path)
				headAtKill, _ = os.ReadFile(headPath(state, h.Run))
				cancel()
			}
		}}
	_, err = s.Solve(ctx, &snapCounter{counter: counter{target: 6}})
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, flushErr)
	require.NoError(t, j.Close())
	require.Len(t, strings.SplitAfter(strings.TrimSuffix(string(journalAtKill), "\n"), "\n"), 4, "the header and three steps at the kill")

	require.NoError(t, os.WriteFile(path, journalAtKill, 0o600))
	if headAtKill == nil {
		require.NoError(t, os.Remove(headPath(state, h.Run)))
	} else {
		require.NoError(t, os.WriteFile(headPath(state, h.Run), headAtKill, 0o600))
	}
	rep, task, err := chainOutcome(t, path)
	require.NoError(t, err, "the journal of a resumed run killed again resumes")
	assert.Equal(t, 3, rep.Resumed)
	sameResult(t, want, rep, task, "after two crashes")
}

// TestJournalAndStateArePrivate: a new journal is 0600, the state folder
// 0700, its key and heads 0600; a key file others may read is refused; a
// journal is never made in the state folder, beside its key.
func TestJournalAndStateArePrivate(t *testing.T) {
	t.Setenv(journal.KeyEnv, "")
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv(journal.StateDirEnv, state)
	path := filepath.Join(t.TempDir(), "j")
	finished(t, path, 3)
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		return fi.Mode().Perm()
	}
	assert.Equal(t, os.FileMode(0o600), mode(path))
	assert.Equal(t, os.FileMode(0o700), mode(state))
	assert.Equal(t, os.FileMode(0o600), mode(filepath.Join(state, keyFile)))
	assert.Equal(t, os.FileMode(0o700), mode(filepath.Join(state, headsDir)))
	heads, err := os.ReadDir(filepath.Join(state, headsDir))
	require.NoError(t, err)
	require.Len(t, heads, 1)
	assert.Equal(t, os.FileMode(0o600), mode(filepath.Join(state, headsDir, heads[0].Name())))

	_, err = journalfile.Create(filepath.Join(state, "j"))
	require.ErrorIs(t, err, journal.ErrPath)
	assert.Contains(t, err.Error(), "beside the key")

	require.NoError(t, os.Chmod(filepath.Join(state, keyFile), 0o644))
	_, err = journalfile.Create(filepath.Join(t.TempDir(), "k"))
	require.ErrorIs(t, err, journal.ErrState)
	assert.Contains(t, err.Error(), "chmod 600")
	require.NoError(t, os.Chmod(filepath.Join(state, keyFile), 0o600))

	// A state folder others may write in (where they could remove a head,
	// hiding a rollback) is refused, with the key given or found.
	require.NoError(t, os.Chmod(state, 0o777))
	_, err = journalfile.Create(filepath.Join(t.TempDir(), "w"))
	require.ErrorIs(t, err, journal.ErrState)
	assert.Contains(t, err.Error(), "chmod go-w")
	t.Setenv(journal.KeyEnv, strings.Repeat("k", journal.MinKey))
	_, err = journal.New(nil) // refused before the store is used
	require.ErrorIs(t, err, journal.ErrState)
}
