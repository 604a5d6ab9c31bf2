package main

import (
	"context"
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stockNATSServer is $MDAP_NATS_SERVER (it must exist), else
// GOPATH/bin/nats-server or nats-server on PATH; the test is skipped,
// saying so, when there is none.
func stockNATSServer(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MDAP_NATS_SERVER"); p != "" {
		_, err := os.Stat(p)
		require.NoError(t, err, "$MDAP_NATS_SERVER")
		return p
	}
	if p := filepath.Join(build.Default.GOPATH, "bin", "nats-server"); build.Default.GOPATH != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	t.Skip("no nats-server binary: install it (go install github.com/nats-io/nats-server/v2@v2.15.2) or set MDAP_NATS_SERVER")
	return ""
}

// stockCluster is a cluster of stock nats-server nodes on loopback,
// started by a test with mdap's authorization block
// (cluster.StockAuthConfig) and nothing provisioned.
type stockCluster struct {
	urls  []string // each node's client URL, node i at urls[i]
	names []string // each node's server name
	nodes []*exec.Cmd
	creds string // the credentials folder (admin.nk, coordinator.nk, worker.nk)
}

// url is the comma-separated list of every node's URL, as --nats takes it.
func (c *stockCluster) url() string { return strings.Join(c.urls, ",") }

// kill SIGKILLs node i.
func (c *stockCluster) kill(t *testing.T, i int) {
	t.Helper()
	require.NoError(t, c.nodes[i].Process.Kill())
	_ = c.nodes[i].Wait()
}

// freePorts returns n free loopback ports.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startStockCluster starts n stock nats-server nodes routed to each other
// on loopback, each with JetStream and mdap's roles, and waits until
// JetStream answers as a cluster (a meta leader is elected). The nodes are
// killed at the test's end. (A test helper: maker nats config writes the
// configuration an operator uses.)
func startStockCluster(t *testing.T, n int) *stockCluster {
	t.Helper()
	bin := stockNATSServer(t)
	dir := t.TempDir()
	c := &stockCluster{creds: filepath.Join(dir, "creds")}
	keys, _, err := cluster.EnsureCredentials(c.creds)
	require.NoError(t, err)
	auth := cluster.StockAuthConfig(keys)
	ports := freePorts(t, 2*n)
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[n+i]))
	}
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		conf := fmt.Sprintf("server_name: %s\nlisten: 127.0.0.1:%d\njetstream { store_dir: %q }\ncluster { name: mdap, listen: 127.0.0.1:%d, routes: [%s] }\n%s",
			name, ports[i], filepath.Join(dir, name), ports[n+i], strings.Join(routes, ", "), auth)
		path := filepath.Join(dir, name+".conf")
		require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
		log, err := os.Create(filepath.Join(dir, name+".log"))
		require.NoError(t, err)
		cmd := exec.Command(bin, "-c", path)
		cmd.Stdout, cmd.Stderr = log, log
		require.NoError(t, cmd.Start())
		log.Close()
		c.nodes = append(c.nodes, cmd)
		c.names = append(c.names, name)
		c.urls = append(c.urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	t.Cleanup(func() {
		for _, cmd := range c.nodes {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		}
	})
	for i, u := range c.urls {
		require.Eventually(t, func() bool {
			conn, err := net.DialTimeout("tcp", strings.TrimPrefix(u, "nats://"), time.Second)
			if err == nil {
				conn.Close()
			}
			return err == nil
		}, 30*time.Second, 50*time.Millisecond, "node %s listens (its log: %s)", c.names[i], filepath.Join(dir, c.names[i]+".log"))
	}
	js := c.admin(t)
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "JetStream answers on the cluster")
	return c
}

// admin connects to the cluster as the admin.
func (c *stockCluster) admin(t *testing.T) jetstream.JetStream {
	t.Helper()
	opts, err := cluster.Credentials(cluster.SeedFile(c.creds, cluster.RoleAdmin), t.Name())
	require.NoError(t, err)
	nc, err := cluster.Connect(c.url(), t.Name(), opts...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}

// engineStreams are every stream maker nats provision makes, buckets by
// their streams.
var engineStreams = []string{cluster.JobsStream, cluster.RepliesStream, cluster.JournalsStream, cluster.TasksStream, "KV_" + cluster.LeaseBucket, "KV_" + cluster.ResultsBucket}

// TestBinaryNATSProvisionReplicasOnAStockCluster: on three stock
// nats-server nodes, maker nats provision --replicas 3 (with a comma list
// of the nodes) gives every stream and bucket of the engine, the runs'
// journals, task queues and results among them, three replicas on three
// distinct nodes; --replicas 5 exits 2 naming the cluster's size.
func TestBinaryNATSProvisionReplicasOnAStockCluster(t *testing.T) {
	t.Parallel()
	c := startStockCluster(t, 3)
	five := start(t, nil, "nats", "provision", "--once", "--nats", c.url(), "--nats-creds", c.creds, "--replicas", "5")
	assert.Equal(t, 2, five.wait(t, time.Minute), five.stderr.String())
	assert.Contains(t, five.stderr.String(), "Replicas = 5: the server cannot place 5 copies")
	assert.Contains(t, five.stderr.String(), "at most the number of JetStream nodes of the cluster")

	three := start(t, nil, "nats", "provision", "--once", "--nats", c.url(), "--nats-creds", c.creds, "--replicas", "3")
	require.Equal(t, 0, three.wait(t, time.Minute), three.stderr.String())
	assert.Contains(t, three.stdout.String(), "(3 replicas)")
	js := c.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range engineStreams {
		st, err := js.Stream(ctx, name)
		require.NoError(t, err, name)
		info := st.CachedInfo()
		assert.Equal(t, 3, info.Config.Replicas, name)
		require.NotNil(t, info.Cluster, name)
		nodes := map[string]bool{info.Cluster.Leader: true}
		for _, p := range info.Cluster.Replicas {
			nodes[p.Name] = true
		}
		assert.Len(t, nodes, 3, "%s: a copy on each node", name)
	}
}

// TestBinarySolveSurvivesTheLossOfANode (MDAP_NATS_CLUSTER_KILL=1; about
// a minute): maker solve --nats of 20 tasks on three stock nats-server
// nodes made by maker nats config and provisioned with --replicas 3, each
// worker with its own key (creds/workerK), the node holding the most
// stream leaders SIGKILLed mid-batch: the batch ends with exit status 0
// and the results of a local maker solve of the same file: every task's
// status, steps and final state, and, for the tasks that lost no sample
// to the node's death, every count.
func TestBinarySolveSurvivesTheLossOfANode(t *testing.T) {
	t.Parallel()
	if os.Getenv("MDAP_NATS_CLUSTER_KILL") == "" {
		t.Skip("a minute on three nats-server nodes: set MDAP_NATS_CLUSTER_KILL=1")
	}
	cdir, urls, nodes := startConfiguredCluster(t)
	c := &stockCluster{urls: strings.Split(urls, ","), nodes: nodes, creds: filepath.Join(cdir, "creds")}
	for k := range nodes {
		c.names = append(c.names, fmt.Sprintf("mdap-n%d", k+1)) // maker nats config's server names
	}
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf(`{"id": "h%d", "hanoi": {"disks": %d}}`, i, 5+i%3))
	}
	require.NoError(t, os.WriteFile(tasks, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	settings := append([]string{"--k", "3"}, natsSim...)
	local := start(t, nil, append([]string{"solve", tasks, "--out", filepath.Join(dir, "local.jsonl"), "--progress", "off"}, settings...)...)
	require.Equal(t, 0, local.wait(t, 10*time.Minute), local.stderr.String())
	want := readResults(t, filepath.Join(dir, "local.jsonl"))
	require.Len(t, want, 20)

	agent := start(t, nil, "nats", "provision", "--nats", c.url(), "--nats-creds", c.creds, "--replicas", "3")
	js := c.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	require.Eventually(t, func() bool {
		_, err := js.Stream(ctx, cluster.JournalsStream)
		return err == nil
	}, 3*time.Minute, 100*time.Millisecond, "provisioned: %s", agent.stderr.String())
	// Three workers serving. On a loaded machine a worker's first request
	// for its route's consumer may time out (exit 1): start it again, as
	// a supervisor would.
	var workers []*child
	for k := range 3 {
		var w *child
		creds := filepath.Join(c.creds, fmt.Sprintf("worker%d", k+1))
		require.Eventually(t, func() bool {
			if w == nil || strings.Contains(w.stderr.String(), "maker: ") {
				w = start(t, nil, append([]string{"worker", "--nats", c.url(), "--nats-creds", creds, "--inflight", "4"}, natsSim...)...)
			}
			return strings.Contains(w.stderr.String(), "serving")
		}, 5*time.Minute, 100*time.Millisecond, "a worker serves")
		workers = append(workers, w)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("provision: %s", agent.stderr.String())
			for _, w := range workers {
				t.Logf("worker: %s", w.stderr.String())
			}
		}
	})
	out := filepath.Join(dir, "nats.jsonl")
	batch := start(t, nil, append([]string{"solve", tasks, "--out", out, "--nats", c.url(), "--nats-creds", c.creds, "--concurrency", "4", "--progress", "off", "--json"}, settings...)...)

	// Mid-batch: some results recorded, not all.
	results := func() int {
		st, err := js.Stream(ctx, "KV_"+cluster.ResultsBucket)
		if err != nil {
			return 0
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
		if err != nil {
			return 0
		}
		return len(info.State.Subjects)
	}
	require.Eventually(t, func() bool { return results() >= 3 }, 5*time.Minute, 50*time.Millisecond, "results are recorded: %s", batch.stderr.String())
	leaders := map[string]int{}
	for _, name := range engineStreams {
		st, err := js.Stream(ctx, name)
		require.NoError(t, err)
		if info := st.CachedInfo(); info.Cluster != nil {
			leaders[info.Cluster.Leader]++
		}
	}
	victim := 0
	for i, name := range c.names {
		if leaders[name] > leaders[c.names[victim]] {
			victim = i
		}
	}
	done := results()
	t.Logf("killing %s, the leader of %d of %d streams, after %d of 20 results", c.names[victim], leaders[c.names[victim]], len(engineStreams), done)
	require.Less(t, done, 20, "the node dies mid-batch")
	c.kill(t, victim)

	require.Equal(t, 0, batch.wait(t, 10*time.Minute), batch.stderr.String())
	got := readResults(t, out)
	require.Len(t, got, 20, "every result in --out")
	lost := 0
	for id, w := range want {
		g := got[id]
		// The outcome: every step's winner (the final state follows from
		// them), as a local run decides it.
		assert.Equal(t, w.Status, g.Status, id)
		assert.Equal(t, w.Steps, g.Steps, id)
		assert.Equal(t, string(w.State), string(g.State), id)
		if g.Errors > 0 {
			// Samples in flight when the node died failed (their job or
			// reply was on it) and were drawn again: more samples, the
			// same winners.
			lost += g.Errors
			assert.GreaterOrEqual(t, g.Samples, w.Samples, id)
			continue
		}
		assert.Equal(t, w.Samples, g.Samples, id)
		assert.Equal(t, w.Valid, g.Valid, id)
		assert.Equal(t, w.Flagged, g.Flagged, id)
		assert.Equal(t, w.OutputTokens, g.OutputTokens, id)
	}
	t.Logf("%d samples lost to the node's death and drawn again", lost)
}
