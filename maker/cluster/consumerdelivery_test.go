package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestARunKeyCannotDeliverIntoAnotherRunsStream (review10, high): a run
// key could create consumers on its own journal stream
// ($JS.API.CONSUMER.CREATE.MDAP_RUN_<run>.*.<its subjects>), and
// JetStream checks no permission on a push consumer's deliver subject:
// push consumers of the thief's own stream delivering to the victim's
// journal subject had the engine itself store the thief's lines on the
// victim's stream, each consumer the thief's stream once more (no bound
// on their number): 44 of the thief's messages, 523,783 bytes of the
// victim's 524,288, and the victim's next 1 KiB line refused "maximum
// bytes exceeded". A coordinator now makes no consumer (it reads its
// journal by batched direct gets): the creation is refused.
func TestARunKeyCannotDeliverIntoAnotherRunsStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{RunKeyBytes: runBudget}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	_, vjs := connectAs(t, url, s.victim)
	tnc, tjs := connectAs(t, url, s.thief)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	vj, err := cluster.CreateJournal(ctx, vjs, "victim", cluster.JournalConfig{})
	require.NoError(t, err)
	defer vj.Close()
	tj, err := cluster.CreateJournal(ctx, tjs, "thief", cluster.JournalConfig{})
	require.NoError(t, err)
	defer tj.Close()
	count := func(stream string) uint64 {
		t.Helper()
		st, err := ajs.Stream(ctx, stream)
		require.NoError(t, err)
		return st.CachedInfo().State.Msgs
	}
	before := count(cluster.RunStream("victim"))

	// The thief's lines, on its own subjects (allowed): 384 KiB of its
	// 512 KiB budget, then push consumers of its own stream (allowed)
	// delivering them to the victim's journal subject, each once more.
	// Then 48 lines of 1 KiB (48 KiB more), relayed once, to fill what
	// is left.
	for _, n := range []struct{ lines, size int }{{12, 32 << 10}, {48, 1 << 10}} {
		for range n.lines {
			_, err = tjs.Publish(ctx, fmt.Sprintf("mdap.run.thief.journal.f%d", n.size), bytes.Repeat([]byte("x"), n.size))
			require.NoError(t, err)
		}
	}
	for i, filter := range []string{"f32768", "f32768", "f32768", "f1024"} {
		name, filter := fmt.Sprintf("relay%d", i), "mdap.run.thief.journal."+filter
		req, err := json.Marshal(map[string]any{
			"stream_name": cluster.RunStream("thief"),
			"config": map[string]any{
				"name": name, "filter_subject": filter,
				"deliver_subject": "mdap.run.victim.journal", "deliver_policy": "all", "ack_policy": "none",
			},
		})
		require.NoError(t, err)
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second) // refused: no answer comes
		m, err := tnc.RequestWithContext(rctx, "$JS.API.CONSUMER.CREATE."+cluster.RunStream("thief")+"."+name+"."+filter, req)
		cancel()
		if err == nil {
			t.Logf("the engine's answer to the thief's push consumer: %.120s", m.Data)
		} else {
			t.Logf("the thief's push consumer: %v", err)
		}
	}
	time.Sleep(2 * time.Second)
	st, err := ajs.Stream(ctx, cluster.RunStream("victim"))
	require.NoError(t, err)
	got := st.CachedInfo().State
	t.Logf("the victim's stream %s: %d messages, %d bytes of its %d", cluster.RunStream("victim"), got.Msgs, got.Bytes, runBudget)
	assert.Equal(t, before, got.Msgs, "lines landed on the victim's stream, delivered by the thief's consumers")
	if got.Msgs > before {
		msg, err := st.GetMsg(ctx, got.LastSeq)
		require.NoError(t, err)
		t.Logf("the victim's stream's last message: %d bytes on %s", len(msg.Data), msg.Subject)
	}
	// The victim's own next line, of 1 KiB.
	_, err = vjs.Publish(ctx, "mdap.run.victim.journal", bytes.Repeat([]byte("v"), 1<<10))
	assert.NoError(t, err, "the victim appends to its own journal")

}
