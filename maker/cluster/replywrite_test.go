package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoCredentialWritesAnotherRunsDataThroughAReplySubject
// (review11, high): NATS checks a publication's subject against the
// client's permissions, never its reply subject, and the server itself
// (JetStream's API, a stream's direct get, the engine's agent) publishes
// its answer on that reply subject, where any stream whose subjects take
// it stores it. So a run key's direct get of a line of its own journal
// (allowed), sent with the reply subject mdap.run.victim.journal, has
// the engine store that line, bytes chosen by the thief, on the victim's
// journal stream; a stream info request (allowed to every role) answered
// to $KV.MDAP_LEASES.victim writes the victim's lease; and a worker's
// does the same, though a worker may "touch no journal, lease". The
// victim's journal must hold its own lines only, its lease its owner's
// value, and it must resume.
func TestNoCredentialWritesAnotherRunsDataThroughAReplySubject(t *testing.T) {
	t.Parallel()
	url, s, wseed := tenantsAndAWorker(t)
	_, vjs := connectAs(t, url, s.victim)
	tnc, tjs := connectAs(t, url, s.thief)
	wnc, _ := connectAs(t, url, wseed)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The victim's run, journaled on its own stream, done.
	vj, err := cluster.CreateJournal(ctx, vjs, "victim", cluster.JournalConfig{Owner: "victim-coordinator"})
	require.NoError(t, err)
	task, err := hanoi.New(3)
	require.NoError(t, err)
	_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2}}, Model: simModel(t, 1), Journal: vj}).Solve(ctx, task)
	require.NoError(t, err)
	require.NoError(t, vj.Close())
	vstream, err := ajs.Stream(ctx, cluster.RunStream("victim"))
	require.NoError(t, err)
	lines := vstream.CachedInfo().State.Msgs
	require.NotZero(t, lines)

	// The victim resumes; meanwhile the thief and the worker publish
	// requests they may make, their reply subjects the victim's data.
	vj, err = cluster.OpenJournal(ctx, vjs, "victim", cluster.JournalConfig{Owner: "victim-coordinator"})
	require.NoError(t, err, "the victim resumes its own journal")
	defer vj.Close()
	tj, err := cluster.CreateJournal(ctx, tjs, "thief", cluster.JournalConfig{})
	require.NoError(t, err)
	defer tj.Close()
	_, err = tjs.Publish(ctx, "mdap.run.thief.journal.forged", []byte(`{"forged":"a line of the thief's choice"}`))
	require.NoError(t, err)
	require.NoError(t, tnc.PublishRequest("$JS.API.DIRECT.GET."+cluster.RunStream("thief")+".mdap.run.thief.journal.forged", "mdap.run.victim.journal", nil))
	require.NoError(t, tnc.PublishRequest("$JS.API.STREAM.INFO."+cluster.JobsStream, "$KV."+cluster.RunLeaseBucket("victim")+".victim", nil))
	require.NoError(t, wnc.PublishRequest("$JS.API.STREAM.INFO."+cluster.JobsStream, "mdap.run.victim.journal", nil))
	require.NoError(t, tnc.Flush())
	require.NoError(t, wnc.Flush())
	time.Sleep(time.Second)

	st, err := ajs.Stream(ctx, cluster.RunStream("victim"))
	require.NoError(t, err)
	got := st.CachedInfo().State.Msgs
	t.Logf("the victim's journal stream: %d messages, %d its own", got, lines)
	assert.Equal(t, lines, got, "messages of other credentials landed on the victim's journal stream")
	for seq := lines + 1; seq <= got; seq++ {
		if m, err := st.GetMsg(ctx, seq); err == nil {
			t.Logf("  line %d, not the victim's: %.90s", seq, m.Data)
		}
	}
	leases, err := ajs.KeyValue(ctx, cluster.RunLeaseBucket("victim"))
	require.NoError(t, err)
	e, err := leases.Get(ctx, "victim")
	require.NoError(t, err)
	assert.Truef(t, string(e.Value()) == "victim-coordinator", "the victim's lease was rewritten by the thief: it holds %.90q", e.Value())

	// The victim's resumed journal goes on, and reads back whole.
	if err := vj.Close(); err != nil {
		t.Logf("the victim's journal's close: %.200v", err)
	}
	vj, err = cluster.OpenJournal(ctx, vjs, "victim", cluster.JournalConfig{WaitLock: 2 * time.Second})
	if err == nil {
		_ = vj.Close()
	}
	assert.Truef(t, err == nil, "the victim resumes again: %.200v", err)
}
