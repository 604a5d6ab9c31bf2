package cluster_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestARunKeyCannotAnswerAnotherRunsSample (review11, critical):
// the reply-subject hole (see
// TestNoCredentialDeletesOrCreatesAStreamThroughAReplySubject)
// used to decide another run's sample. A run key
// reads MDAP_JOBS's configuration (stream info, allowed), adds a
// RePublish of every job to its own inbox, writes that configuration as a
// line of its own journal and has the server send the line, by a direct
// get of it (allowed), to $JS.API.STREAM.UPDATE.MDAP_JOBS: every job is
// then republished to the thief, lease key included. For the victim's
// job it writes a reply of its own (the job's id and lease, the answer
// it likes) as another line, and has the server send that line to the
// job's reply subject under the honest worker's key. The victim's Drawer
// takes it as the honest worker's answer (the lease matches; the voter is
// the key the subject names): the thief decides the sample, under an
// identity of its choice, before the honest worker (whose model takes
// 3 s) answers.
func TestARunKeyCannotAnswerAnotherRunsSample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	wnc, wjs := connectAs(t, url, s.worker)
	honest := identityOf(wnc)
	worker := newWorker(t, wjs, slowSim{simModel(t, 5), 3 * time.Second}, cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	_, vjs := connectAs(t, url, s.victim)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)

	// The thief: its journal's lines are its to write, and to get.
	tnc, tjs := connectAs(t, url, s.thief)
	tj, err := cluster.CreateJournal(ctx, tjs, "thief", cluster.JournalConfig{})
	require.NoError(t, err)
	defer tj.Close()
	spy, err := tnc.SubscribeSync(tnc.Opts.InboxPrefix + ".spy.>")
	require.NoError(t, err)
	jobs, err := tjs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	cfg := jobs.CachedInfo().Config
	cfg.RePublish = &jetstream.RePublish{Source: ">", Destination: tnc.Opts.InboxPrefix + ".spy.>"}
	data, err := json.Marshal(cfg)
	require.NoError(t, err)
	sendLine := func(name string, line []byte, to string) {
		t.Helper()
		_, err := tjs.Publish(ctx, "mdap.run.thief.journal."+name, line)
		require.NoError(t, err)
		require.NoError(t, tnc.PublishRequest("$JS.API.DIRECT.GET."+cluster.RunStream("thief")+".mdap.run.thief.journal."+name, to, nil))
		require.NoError(t, tnc.Flush())
	}
	sendLine("config", data, "$JS.API.STREAM.UPDATE."+cluster.JobsStream)
	time.Sleep(500 * time.Millisecond)

	type result struct {
		resp *llms.ContentResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := remote.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "the victim's question")})
		done <- result{resp, err}
	}()
	if m, err := spy.NextMsg(5 * time.Second); err == nil {
		var job cluster.Job
		require.NoError(t, json.Unmarshal(m.Data, &job))
		t.Logf("the thief read the victim's job %s (lease %.8s...) on %s", job.ID, job.Lease, m.Subject)
		forged, err := json.Marshal(cluster.Reply{Version: cluster.WireVersion, ID: job.ID, Lease: job.Lease, Worker: "honest",
			Samples: []cluster.SampleReply{{Choices: []cluster.Choice{{Content: "the thief's answer"}}}}})
		require.NoError(t, err)
		sendLine("reply", forged, job.ReplyTo+"."+honest)
	} else {
		t.Logf("the thief read no job: %v", err)
	}
	r := <-done
	var got string
	if r.err == nil && len(r.resp.Choices) > 0 {
		got = r.resp.Choices[0].Content
	}
	t.Logf("the victim's call: %q, %v; drawer %+v", got, r.err, d.Stats())
	assert.False(t, strings.Contains(got, "thief"), "the thief answered the victim's sample under the honest worker's key")
}
