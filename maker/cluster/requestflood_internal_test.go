package cluster

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// TestARequestFloodLeavesNoStateOnTheEngine (review12, high): on a
// server with roles a client's request reaches the engine through a
// service import, and the server keeps, for each request with a reply
// subject, its way back (a response mapping in the engine's account, a
// reverse entry in the clients', ~450 bytes). It kept each 2 minutes
// (NATS's default threshold) after a streamed answer's last message or
// with no answer, so a worker sending pulls the agent answers at once,
// a run key sending direct gets of its own journal, and a run key
// acknowledging, with a reply, deliveries its consumer does not hold
// (JetStream answers none; nothing to wait for, so at the connection's
// full rate) left 9,000 mappings of 9,000 requests 5 s later: one
// connection's rate times 120 s times the 256 connections a key may
// hold. Now a pull's answer ends with an empty message (endPull), and
// every import has a threshold (answerWait for single answers and
// direct gets): a single answer's way back goes with it, and the rest
// within twice their threshold.
func TestARequestFloodLeavesNoStateOnTheEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wseed, err := AddWorker(dir, "rogue")
	require.NoError(t, err)
	rseed, err := AddRunCoordinator(dir, "thief")
	require.NoError(t, err)
	keys, _, err := EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	eng, err := srv.ns.LookupAccount(EngineAccount)
	require.NoError(t, err)
	connect := func(seed string) *nats.Conn {
		opts, err := Credentials(seed, t.Name())
		require.NoError(t, err)
		nc, err := Connect(srv.ClientURL(), t.Name(), opts...)
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		return nc
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	// The run key's own journal, with a line: what its direct gets read.
	rnc := connect(rseed)
	rjs, err := jetstream.New(rnc)
	require.NoError(t, err)
	j, err := CreateJournal(ctx, rjs, "thief", JournalConfig{})
	require.NoError(t, err)
	defer j.Close()
	_, err = rjs.Publish(ctx, runJournalSubject("thief"), []byte("a line"))
	require.NoError(t, err)

	const n = 3000
	flood := func(nc *nats.Conn, subject string, body []byte) {
		var answered atomic.Int64
		sub, err := nc.Subscribe(nc.Opts.InboxPrefix+".flood.>", func(m *nats.Msg) {
			if len(m.Data) > 0 || len(m.Header) > 0 { // not a pull's closing empty message
				answered.Add(1)
			}
		})
		require.NoError(t, err)
		require.NoError(t, sub.SetPendingLimits(-1, -1))
		// In rounds of 500, each answered before the next: the answers
		// coming back must not make the client a slow consumer.
		for i := range n {
			require.NoError(t, nc.PublishRequest(subject, fmt.Sprintf("%s.flood.%d", nc.Opts.InboxPrefix, i), body), "%v", nc.LastError())
			if (i+1)%500 == 0 {
				for answered.Load() < int64(i+1) && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}
		require.EqualValues(t, n, answered.Load(), "every request of the flood answered")
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	wnc := connect(wseed)
	flood(wnc, workSubject+workerIdentity(wnc.Opts.InboxPrefix)+"."+workPull, []byte("not a pull"))
	flood(rnc, "$JS.API.DIRECT.GET."+RunStream("thief")+"."+runJournalSubject("thief"), nil)
	// A singleton import's mapping goes with its answer, but JetStream
	// answers no acknowledgement of a delivery its consumer does not hold:
	// the run key's acks on its own task queue's consumer, each with a
	// reply, leave one each, published at the connection's full rate (no
	// answer to wait for).
	_, err = OpenTaskQueue(ctx, rjs, "thief", TaskQueueConfig{})
	require.NoError(t, err)
	_, err = rnc.Subscribe(rnc.Opts.InboxPrefix+".acks.>", func(*nats.Msg) {})
	require.NoError(t, err)
	ack := "$JS.ACK." + RunQueueStream("thief") + "." + taskConsumerOf("thief") + ".1.999.999.0.0"
	for i := range n {
		require.NoError(t, rnc.PublishRequest(ack, fmt.Sprintf("%s.acks.%d", rnc.Opts.InboxPrefix, i), []byte("+ACK")))
	}
	require.NoError(t, rnc.Flush())

	// An answered request's way back goes with its answer (a pull's
	// with its ending empty message); an unanswered one's within twice
	// answerWait (the server sweeps them every answerWait).
	deadline := time.Now().Add(2*answerWait + 5*time.Second)
	for eng.NumPendingAllResponses() > n/10 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	pending := eng.NumPendingAllResponses()
	t.Logf("%d requests answered, %d not; then the engine's account holds %d response mappings, the heap %d MB more than before",
		2*n, n, pending, (int64(ms.HeapAlloc)-int64(before))>>20)
	require.LessOrEqual(t, pending, n/10,
		"one worker's and one run key's requests are still held by the server (response mappings of streamed imports, and of unanswered ones, stay 2 minutes): a flood exhausts the engine's memory")
}
