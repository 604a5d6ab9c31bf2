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

// TestNoCredentialDeletesOrCreatesAStreamThroughAReplySubject
// (review11, critical): the reply subject of a request is not checked
// against its sender's permissions, and the answer is published on it
// by the server or the engine's agent, which JetStream's API then takes
// for a request of its own account, unchecked. An empty answer (the
// agent's "{}" to a worker's route request; a direct get of an empty
// line the thief wrote on its own journal) sent to
// $JS.API.STREAM.DELETE.<stream> deletes that stream; a direct get of a
// line holding a stream's configuration sent to
// $JS.API.STREAM.CREATE.<name> creates it. So a worker credential
// deletes a run key's journal stream, and a run key deletes the shared
// journals and creates a stream of its own design (docs/nats.md: no role
// but the admin may create, update, delete or purge a stream).
func TestNoCredentialDeletesOrCreatesAStreamThroughAReplySubject(t *testing.T) {
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

	// The worker: a route request, answered "{}", sent on to a delete.
	req, _ := json.Marshal(map[string]string{"route": "review11"})
	require.NoError(t, wnc.PublishRequest("mdap.engine.route."+identityOf(wnc), "$JS.API.STREAM.DELETE."+cluster.RunStream("victim"), req))
	// The run key: lines of its own journal, got directly with the
	// reply subject of a delete and of a create.
	_, err = tjs.Publish(ctx, "mdap.run.thief.journal.empty", nil)
	require.NoError(t, err)
	_, err = tjs.Publish(ctx, "mdap.run.thief.journal.config", []byte(`{"name":"EVIL","subjects":["evil.>"],"storage":"memory"}`))
	require.NoError(t, err)
	get := "$JS.API.DIRECT.GET." + cluster.RunStream("thief") + ".mdap.run.thief.journal."
	require.NoError(t, tnc.PublishRequest(get+"empty", "$JS.API.STREAM.DELETE."+cluster.JournalsStream, nil))
	require.NoError(t, tnc.PublishRequest(get+"config", "$JS.API.STREAM.CREATE.EVIL", nil))
	require.NoError(t, wnc.Flush())
	require.NoError(t, tnc.Flush())
	time.Sleep(2 * time.Second)

	after := streams()
	t.Logf("streams before: %v\nstreams after:  %v", before, after)
	assert.Equal(t, before, after, "a worker or a run key deleted or created a stream")
}
