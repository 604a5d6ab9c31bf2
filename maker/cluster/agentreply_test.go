package cluster_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoCredentialHasTheAgentAnswerOutsideAnInbox (review11, critical):
// NATS checks no one's right to the reply subject a request names, and
// the engine's agent answers with the admin's rights. A worker's route
// request answered "{}" (an empty request to JetStream's API) on
// $JS.API.STREAM.DELETE.<stream> deleted a run key's journal stream; a
// run key's journal request so deleted the shared journals. The agent
// now answers only under an inbox: every stream stays, and the senders
// are still served when they ask from their inbox.
func TestNoCredentialHasTheAgentAnswerOutsideAnInbox(t *testing.T) {
	t.Parallel()
	url, s, wseed := tenantsAndAWorker(t)
	_, vjs := connectAs(t, url, s.victim)
	tnc, tjs := connectAs(t, url, s.thief)
	wnc, _ := connectAs(t, url, wseed)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vj, err := cluster.CreateJournal(ctx, vjs, "victim", cluster.JournalConfig{})
	require.NoError(t, err)
	defer vj.Close()
	tj, err := cluster.CreateJournal(ctx, tjs, "thief", cluster.JournalConfig{})
	require.NoError(t, err)
	defer tj.Close()
	streams := func() []string {
		var names []string
		l := ajs.StreamNames(ctx)
		for n := range l.Name() {
			names = append(names, n)
		}
		require.NoError(t, l.Err())
		slices.Sort(names)
		return names
	}
	before := streams()
	victimMsgs := func() uint64 {
		st, err := ajs.Stream(ctx, cluster.RunStream("victim"))
		require.NoError(t, err)
		return st.CachedInfo().State.Msgs
	}
	vmsgs := victimMsgs()

	route, _ := json.Marshal(map[string]string{"route": "review11"})
	require.NoError(t, wnc.PublishRequest("mdap.engine.route."+identityOf(wnc), "$JS.API.STREAM.DELETE."+cluster.RunStream("victim"), route))
	require.NoError(t, tnc.PublishRequest("mdap.engine.journal.thief", "$JS.API.STREAM.DELETE."+cluster.JournalsStream, []byte(`{}`)))
	require.NoError(t, tnc.PublishRequest("mdap.engine.journal.thief", "mdap.run.victim.journal", []byte(`{}`)))
	require.NoError(t, wnc.Flush())
	require.NoError(t, tnc.Flush())
	// Asked from their inboxes, the same requests are answered: the
	// agent has read what came before them.
	m, err := wnc.Request("mdap.engine.route."+identityOf(wnc), route, 10*time.Second)
	require.NoError(t, err)
	assert.NotContains(t, string(m.Data), "error")
	m, err = tnc.Request("mdap.engine.journal.thief", []byte(`{}`), 10*time.Second)
	require.NoError(t, err)
	assert.NotContains(t, string(m.Data), "error")

	assert.Equal(t, before, streams(), "a worker or a run key had the agent delete or create a stream")
	assert.Equal(t, vmsgs, victimMsgs(), "nothing written on the victim's journal")
}
