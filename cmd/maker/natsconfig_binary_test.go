package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freePortRun returns a base port with n free loopback ports from it up.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(30000)
		var ls []net.Listener
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if len(ls) == n {
			return base
		}
	}
	t.Fatal("no free range of loopback ports")
	return 0
}

// startConfiguredCluster writes a cluster of three nodes with maker nats config
// into a new folder, starts each node with nats-server -c, and returns
// the folder, the URL list maker nats config printed and the nodes'
// processes (node k at index k-1).
func startConfiguredCluster(t *testing.T) (string, string, []*exec.Cmd) {
	t.Helper()
	bin := stockNATSServer(t)
	dir := filepath.Join(t.TempDir(), "cluster")
	cfg := start(t, nil, "nats", "config", "--out", dir, "--base-port", fmt.Sprint(freePortRun(t, 6)))
	require.Equal(t, 0, cfg.wait(t, 30*time.Second), cfg.stderr.String())
	urls := strings.TrimSpace(cfg.stdout.String())
	var nodes []*exec.Cmd
	for k := 1; k <= 3; k++ {
		log, err := os.Create(filepath.Join(t.TempDir(), fmt.Sprintf("node%d.log", k)))
		require.NoError(t, err)
		n := exec.Command(bin, "-c", filepath.Join(dir, fmt.Sprintf("node%d.conf", k)))
		n.Stdout, n.Stderr = log, log
		require.NoError(t, n.Start())
		t.Cleanup(func() {
			_ = n.Process.Signal(syscall.SIGCONT)
			_ = n.Process.Kill()
			_ = n.Wait()
			log.Close()
		})
		nodes = append(nodes, n)
	}
	for _, u := range strings.Split(urls, ",") {
		host := strings.TrimPrefix(u, "nats://")
		require.Eventually(t, func() bool {
			c, err := net.Dial("tcp", host)
			if err == nil {
				c.Close()
			}
			return err == nil
		}, 30*time.Second, 20*time.Millisecond, "node %s starts", u)
	}
	return dir, urls, nodes
}

// TestBinaryNATSConfigCluster: maker nats config writes a three-node
// cluster that stock nats-server processes start from as written; maker
// nats provision (DIR/creds, three replicas), a worker of its own key
// (DIR/creds/worker1) and a coordinator (DIR/creds) run on it, and the run
// is the local run.
func TestBinaryNATSConfigCluster(t *testing.T) {
	t.Parallel()
	_, local := hanoiJSON(t, append([]string{"--disks", "5"}, natsSim...)...)
	dir, urls, _ := startConfiguredCluster(t)
	assert.Len(t, strings.Split(urls, ","), 3)

	agent := start(t, nil, "nats", "provision", "--nats", urls, "--nats-creds", filepath.Join(dir, "creds"), "--replicas", "3")
	require.Eventually(t, func() bool { return strings.Contains(agent.stderr.String(), "serving") }, time.Minute, 20*time.Millisecond,
		"maker nats provision serves: %s %s", agent.stdout.String(), agent.stderr.String())
	worker := start(t, nil, append([]string{"worker", "--nats", urls, "--nats-creds", filepath.Join(dir, "creds", "worker1")}, natsSim...)...)
	run := start(t, nil, append([]string{"hanoi", "--disks", "5", "--json", "--progress", "off", "--nats", urls, "--nats-creds", filepath.Join(dir, "creds")}, natsSim...)...)
	require.Equal(t, 0, run.wait(t, 2*time.Minute), run.stderr.String())
	sameRun(t, local, summary(t, run))
	stopWorkers(t, worker)
	require.NoError(t, agent.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, agent.wait(t, 30*time.Second), agent.stderr.String())

	// The coordinator's folder holds no worker key, a worker's no other.
	assert.NoFileExists(t, filepath.Join(dir, "creds", "worker.nk"))
	entries, err := os.ReadDir(filepath.Join(dir, "creds", "worker2"))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "worker.nk and worker.pub only")
}

// TestBinaryNATSConfigFiles: the files are secrets (0600 in folders of
// 0700); a folder that is not empty is refused with exit 2 and left as it
// was, unless --force; bad settings exit 2 and write nothing.
func TestBinaryNATSConfigFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "c")
	c := start(t, nil, "nats", "config", "--out", dir, "--nodes", "2", "--workers", "1", "--base-port", "30000")
	require.Equal(t, 0, c.wait(t, 30*time.Second), c.stderr.String())
	assert.Equal(t, "nats://127.0.0.1:30000,nats://127.0.0.1:30001\n", c.stdout.String())
	conf, err := os.ReadFile(filepath.Join(dir, "node2.conf"))
	require.NoError(t, err)
	for _, want := range []string{`listen: "127.0.0.1:30001"`, `listen: "127.0.0.1:30003"`, `@127.0.0.1:30002"`, `server_name: "mdap-n2"`, "authorization {", filepath.Join(dir, "node2")} {
		assert.Contains(t, string(conf), want)
	}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		st, err := os.Stat(p)
		require.NoError(t, err)
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		assert.Equal(t, want, st.Mode().Perm(), p)
		return nil
	}))
	for _, want := range []string{"node1.conf", "node2.conf", "creds/coordinator.nk", "creds/admin.nk", "creds/worker1/worker.nk"} {
		assert.FileExists(t, filepath.Join(dir, want))
	}

	again := start(t, nil, "nats", "config", "--out", dir)
	assert.Equal(t, 2, again.wait(t, 30*time.Second))
	assert.Contains(t, again.stderr.String(), "not empty")
	after, err := os.ReadFile(filepath.Join(dir, "node2.conf"))
	require.NoError(t, err)
	assert.Equal(t, conf, after, "a refused config leaves the folder as it was")

	forced := start(t, nil, "nats", "config", "--out", dir, "--force", "--nodes", "1")
	require.Equal(t, 0, forced.wait(t, 30*time.Second), forced.stderr.String())
	assert.NoFileExists(t, filepath.Join(dir, "node2.conf"), "--force replaces the folder whole")
	one, err := os.ReadFile(filepath.Join(dir, "node1.conf"))
	require.NoError(t, err)
	assert.NotContains(t, string(one), "cluster {", "one node has no routes")

	for _, args := range [][]string{
		{"--nodes", "0"}, {"--nodes", "16"}, {"--workers", "0"}, {"--base-port", "65533"}, {"--name", "a b"}, {},
	} {
		out := filepath.Join(root, "bad")
		a := []string{"nats", "config"}
		if len(args) > 0 {
			a = append(a, "--out", out)
		}
		c := start(t, nil, append(a, args...)...)
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", args, c.stderr.String())
		assert.NoDirExists(t, out, "%v", args)
	}
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary folder left beside DIR")

	help := start(t, nil, "nats", "config", "--help")
	require.Equal(t, 0, help.wait(t, 30*time.Second))
	assert.Contains(t, help.stdout.String(), "--base-port")
}
