package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// loopCluster is a cluster of in-process nats-server nodes on loopback,
// each with JetStream on a store of its own; a node shut down can be
// started again on its store, as a killed node is restarted.
type loopCluster struct {
	t     *testing.T
	opts  []*server.Options
	nodes []*server.Server
}

// freeLoopPort returns a loopback port nothing listens on, below the
// ephemeral range (32768 and up, where ":0" picks): a node stopped and
// started again needs its ports free, and any outgoing connection may
// take an ephemeral port while the node is down.
func freeLoopPort(t *testing.T) int {
	t.Helper()
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("no free loopback port below 32000")
	return 0
}

func startLoopCluster(t *testing.T, n int) *loopCluster {
	t.Helper()
	c := &loopCluster{t: t}
	routes := make([]string, n)
	clientPorts := make([]int, n)
	routePorts := make([]int, n)
	taken := map[int]bool{}
	pick := func() int {
		for {
			if p := freeLoopPort(t); !taken[p] {
				taken[p] = true
				return p
			}
		}
	}
	for i := range n {
		clientPorts[i], routePorts[i] = pick(), pick()
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i])
	}
	for i := range n {
		c.opts = append(c.opts, &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: clientPorts[i],
			NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir(),
			Cluster: server.ClusterOpts{Name: "loop", Host: "127.0.0.1", Port: routePorts[i]},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		})
		c.nodes = append(c.nodes, nil)
		c.start(i)
	}
	t.Cleanup(func() {
		for _, s := range c.nodes {
			if s != nil {
				s.Shutdown()
				s.WaitForShutdown()
			}
		}
	})
	// The cluster is formed once the metadata leader sees every node
	// and every node is current.
	deadline := time.Now().Add(20 * time.Second)
	for {
		formed, led := true, false
		for _, s := range c.nodes {
			formed = formed && s.JetStreamIsCurrent()
			led = led || len(s.JetStreamClusterPeers()) == n // the leader's view
		}
		formed = formed && led
		if formed {
			return c
		}
		require.True(t, time.Now().Before(deadline), "the cluster did not form within 20 s")
		time.Sleep(50 * time.Millisecond)
	}
}

// start starts node i (again) on its ports and store.
func (c *loopCluster) start(i int) {
	c.t.Helper()
	s, err := server.NewServer(c.opts[i])
	require.NoError(c.t, err)
	go s.Start()
	require.True(c.t, s.ReadyForConnections(10*time.Second), "node %d did not start", i+1)
	c.nodes[i] = s
}

// stop shuts node i down, as a kill does (its store stays).
func (c *loopCluster) stop(i int) {
	c.nodes[i].Shutdown()
	c.nodes[i].WaitForShutdown()
	c.nodes[i] = nil
}

// connect connects to node i alone. A node just started again, catching
// up on its streams, answered a connect later than nats.go's 2 s connect
// timeout on a loaded machine ("read tcp ...: i/o timeout" from this
// connect, in a run slowed three times): the tests are about what the
// node serves once connected, so the connect waits as long as the node's
// start may (10 s).
func (c *loopCluster) connect(i int) jetstream.JetStream {
	c.t.Helper()
	nc, err := nats.Connect(c.nodes[i].ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond), nats.Timeout(10*time.Second))
	require.NoError(c.t, err)
	c.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(c.t, err)
	return js
}

// openStore takes run's lease and loads its journal store through js.
func openStore(t *testing.T, js jetstream.JetStream, run, owner string) *journalStore {
	t.Helper()
	ctx := context.Background()
	l, err := acquireLease(ctx, js, LeaseBucket, run, JournalConfig{Replicas: 3, Owner: owner, WaitLock: 30 * time.Second})
	require.NoError(t, err)
	st, err := runStream(ctx, js, JournalsStream, 3)
	if err != nil {
		l.release()
	}
	require.NoError(t, err)
	s := &journalStore{js: js, stream: st, run: run, subject: journalSubject + run, lease: l, maxAge: DefaultRetention}
	if err := s.load(ctx); err != nil {
		l.release()
		require.NoError(t, err)
	}
	return s
}

// A coordinator that resumes a journal through a node that was down while
// the journal grew (a killed node started again, still catching up) reads
// the journal's last line as the stream's leader has it, so its appends
// are stored, not refused as another coordinator's. The replicas of a
// stream answer direct gets as soon as they are nearly caught up, and a
// client's request goes to the replica of its own node first: a resumed
// writer that took its expectation from that replica expected a line
// the journal had long passed ("wrong last sequence"), and took it for
// another coordinator's write (ErrLeaseTaken).
func TestResumedJournalThroughALaggingNode(t *testing.T) {
	t.Parallel()
	c := startLoopCluster(t, 3)
	ctx := context.Background()
	jsA := c.connect(0)
	// A cluster that has just formed may take its time to place them.
	require.Eventually(t, func() bool { return ensureRunStreams(ctx, jsA, 3) == nil }, 60*time.Second, 100*time.Millisecond, "the run streams are made")

	line := 0
	appendLines := func(s *journalStore, n int) {
		for range n {
			line++
			require.NoError(t, s.Append(fmt.Appendf(nil, `{"line":%d}`, line)))
			require.NoError(t, s.Flush())
		}
	}
	// Twice: a node's catching up does not always overlap a resume.
	for round := range 2 {
		w := openStore(t, jsA, "r", "a")
		appendLines(w, 20)
		c.stop(2)
		appendLines(w, 300) // while node 3 is down
		require.NoError(t, w.Close())
		// The leader compacts its log, so node 3 catches up from a
		// snapshot of the stream, as a node that was down a while does.
		for _, n := range c.nodes[:2] {
			if n.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, JournalsStream) {
				require.NoError(t, n.JetStreamSnapshotStream(server.DEFAULT_GLOBAL_ACCOUNT, JournalsStream))
			}
		}

		c.start(2)
		jsC := c.connect(2)
		// Resume (load the journal as a coordinator opening it does)
		// and append a line, again and again while node 3 catches up,
		// and a little after.
		// (Its lease is taken through node 1: the lease bucket is not
		// what this test is about.)
		r := openStore(t, jsA, "r", fmt.Sprintf("c%d", round))
		var st jetstream.Stream
		require.Eventually(t, func() bool {
			var err error
			st, err = jsC.Stream(ctx, JournalsStream)
			return err == nil
		}, 20*time.Second, 50*time.Millisecond, "node 3 serves no stream info")
		began := time.Now()
		deadline := began.Add(3 * time.Second)
		i := 0
		for ; time.Now().Before(deadline); i++ {
			s := &journalStore{js: jsC, stream: st, run: "r", subject: r.subject, lease: r.lease, maxAge: DefaultRetention}
			require.NoError(t, s.load(ctx))
			require.Equal(t, line, s.lines, "round %d, resume %d: the journal's lines, as the leader counts them", round, i)
			line++
			require.NoError(t, s.Append(fmt.Appendf(nil, `{"line":%d}`, line)))
			require.NoError(t, s.Flush(), "round %d, resume %d, %s after node 3 started again", round, i, time.Since(began).Round(time.Millisecond))
		}
		require.NoError(t, r.Close())
		t.Logf("round %d: %d resumes through node 3 in the %s after it started again", round, i, time.Since(began).Round(time.Millisecond))
	}
}

// A coordinator that gathers a batch's results through a node that was
// down while they were recorded gets every one: the keys are listed by
// the bucket's leader, and a value read from a replica still catching up
// came back "not found", which Results took for a task without a result
// and left out of --out.
func TestResultsThroughALaggingNode(t *testing.T) {
	t.Parallel()
	c := startLoopCluster(t, 3)
	ctx := context.Background()
	jsA := c.connect(0)
	require.Eventually(t, func() bool { return ensureRunStreams(ctx, jsA, 3) == nil }, 60*time.Second, 100*time.Millisecond, "the run streams are made")
	// The queue's consumer, asked for while the new streams elect their
	// leaders, may be refused for a moment (a full run of the package on
	// a loaded machine failed here after 1.2 s): asked again, as a
	// restarted node's below.
	var qa *TaskQueue
	var err error
	require.Eventually(t, func() bool {
		qa, err = OpenTaskQueue(ctx, jsA, "q", TaskQueueConfig{Replicas: 3})
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "the task queue opens")
	// put records results through node 1. Right after node 3 stops, the
	// bucket may be electing a leader (node 3 led it): a put then gets
	// no response, or no responder, and is tried again (a retried put whose first try was
	// stored finds its own value). What this test reads is the results
	// once stored, not their writing during the election.
	put := func(from, to int) {
		for i := from; i < to; i++ {
			key, val := qa.resultKey(fmt.Sprintf("t%d", i)), fmt.Appendf(nil, "r%d", i)
			for give := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				_, err := qa.results.Create(ctx, key, val)
				if errors.Is(err, jetstream.ErrKeyExists) {
					e, err := qa.results.Get(ctx, key)
					require.NoError(t, err)
					require.Equal(t, string(val), string(e.Value()), "a retried put finds its own value")
					break
				}
				electing := errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)
				if err == nil || !electing || time.Now().After(give) {
					require.NoError(t, err, "result %d", i)
					break
				}
			}
		}
	}
	recorded := 0
	for round := range 2 {
		put(recorded, recorded+20)
		recorded += 20
		c.stop(2)
		put(recorded, recorded+300) // while node 3 is down
		recorded += 300
		for _, n := range c.nodes[:2] {
			if n.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, "KV_"+ResultsBucket) {
				require.NoError(t, n.JetStreamSnapshotStream(server.DEFAULT_GLOBAL_ACCOUNT, "KV_"+ResultsBucket))
			}
		}
		c.start(2)
		jsC := c.connect(2)
		var qc *TaskQueue
		require.Eventually(t, func() bool {
			qc, err = OpenTaskQueue(ctx, jsC, "q", TaskQueueConfig{Replicas: 3})
			return err == nil
		}, 20*time.Second, 50*time.Millisecond, "node 3 serves no queue")
		// A read node 3 answers with no responder for a moment after its
		// restart (its direct gets not yet served) is tried again; a read
		// that answers must hold every result.
		deadline, reads := time.Now().Add(3*time.Second), 0
		for i := 0; time.Now().Before(deadline); i++ {
			got, err := qc.Results(ctx)
			if errors.Is(err, nats.ErrNoResponders) {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			require.NoError(t, err)
			require.Len(t, got, recorded, "round %d, read %d: every result recorded", round, i)
			reads++
		}
		require.Positive(t, reads, "round %d: node 3 answered a read within 3 s", round)
	}
}
