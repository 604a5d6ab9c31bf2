package cluster_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// stockServer is $MDAP_NATS_SERVER, which .ci/nats.sh sets (it must
// exist); without it the test is skipped. It does not look for a
// nats-server of its own: where CI has installed one (GOPATH/bin), the
// default suite would run this test's two minutes again, after or before
// the NATS stage that runs it.
func stockServer(t *testing.T) string {
	t.Helper()
	p := os.Getenv("MDAP_NATS_SERVER")
	if p == "" {
		t.Skip("set MDAP_NATS_SERVER to a nats-server v2.15.2 binary (.ci/nats.sh does; it runs this test in CI's NATS stage)")
	}
	_, err := os.Stat(p)
	require.NoError(t, err, "$MDAP_NATS_SERVER")
	return p
}

// stockProcess is a stock nats-server that startStockProcess started.
type stockProcess struct {
	cmd         *exec.Cmd
	port        int
	url         string
	conf, store string
}

// startStockProcess starts the nats-server bin on the configuration file conf,
// written with a free loopback port, the JetStream store store and auth
// (an accounts or authorization block), its output in conf's folder's
// server.log, and waits until it takes connections. It is killed when
// the test ends.
func startStockProcess(t *testing.T, bin, conf, store, auth string) *stockProcess {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stockProcess{port: l.Addr().(*net.TCPAddr).Port, conf: conf, store: store}
	require.NoError(t, l.Close())
	p.url = fmt.Sprintf("nats://127.0.0.1:%d", p.port)
	p.write(t, auth)
	p.cmd = exec.Command(bin, "-c", conf)
	out, err := os.OpenFile(filepath.Join(filepath.Dir(conf), "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait(); out.Close() })
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "nats-server starts on %s", conf)
	return p
}

// write writes p's configuration with auth (a reload then reads it).
func (p *stockProcess) write(t *testing.T, auth string) {
	t.Helper()
	body := fmt.Sprintf("listen: \"127.0.0.1:%d\"\njetstream { store_dir: %q }\n%s", p.port, p.store, auth)
	require.NoError(t, os.WriteFile(p.conf, []byte(body), 0o600))
}

// TestStockNATSServerRoles: a stock nats-server configured with
// StockAuthConfig (as docs/nats.md says: one nkey per machine, and a
// coordinator identity per run) holds against the same rogue as the
// embedded server.
func TestStockNATSServerRoles(t *testing.T) {
	t.Parallel()
	bin := stockServer(t)
	dir := t.TempDir()
	var seedFiles [4]string // coordinator, honest worker, rogue worker, another honest worker
	keys := cluster.RoleKeys{}
	for i, role := range []cluster.Role{cluster.RoleCoordinator, cluster.RoleWorker, cluster.RoleWorker, cluster.RoleWorker} {
		d := filepath.Join(dir, fmt.Sprint(i))
		k, _, err := cluster.EnsureCredentials(d)
		require.NoError(t, err)
		keys[role] = append(keys[role], k[role]...)
		seedFiles[i] = cluster.SeedFile(d, role)
		if i == 0 {
			keys[cluster.RoleAdmin] = k[cluster.RoleAdmin]
		}
	}
	adminSeed := cluster.SeedFile(filepath.Join(dir, "0"), cluster.RoleAdmin)
	tenantKeys, tenants := issueTenants(t, filepath.Join(dir, "0"))
	for _, run := range []string{"victim", "thief"} {
		keys[cluster.RunRole(run)] = tenantKeys[cluster.RunRole(run)]
	}
	tenants.worker = seedFiles[1]
	// Two more run keys: one floods its journal budget beside the other.
	budget := budgetSeeds{flooderRun: "flooder", otherRun: "bystander", worker: seedFiles[1], admin: adminSeed}
	var err error
	budget.flooder, err = cluster.AddRunCoordinator(filepath.Join(dir, "0"), budget.flooderRun)
	require.NoError(t, err)
	budget.other, err = cluster.AddRunCoordinator(filepath.Join(dir, "0"), budget.otherRun)
	require.NoError(t, err)
	// Three more: each floods one share of its budget (its task queue,
	// results, leases) beside the bystander.
	floods := map[string]budgetSeeds{}
	for _, run := range []string{"qflood", "rflood", "lflood"} {
		seed, err := cluster.AddRunCoordinator(filepath.Join(dir, "0"), run)
		require.NoError(t, err)
		floods[run] = budgetSeeds{flooder: seed, flooderRun: run, other: budget.other, otherRun: budget.otherRun, admin: adminSeed, coord: seedFiles[0]}
	}
	runKeys, _, err := cluster.EnsureCredentials(filepath.Join(dir, "0"))
	require.NoError(t, err)
	for _, run := range []string{budget.flooderRun, budget.otherRun, "qflood", "rflood", "lflood"} {
		keys[cluster.RunRole(run)] = runKeys[cluster.RunRole(run)]
	}
	url := startStockProcess(t, bin, filepath.Join(dir, "nats.conf"), filepath.Join(dir, "js"), cluster.StockAuthConfig(keys)).url
	_, err = nats.Connect(url)
	require.Error(t, err, "no credentials")
	// A squatter came first (a server run with older permissions): the
	// job stream republishes every job to it, the reply stream is on
	// disk. The operator provisions the engine (maker nats provision):
	// both are set back to mdap's settings.
	_, ajs := connectAs(t, url, adminSeed)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = ajs.CreateStream(ctx, jetstream.StreamConfig{Name: cluster.JobsStream, Subjects: []string{"mdap.jobs.>"}, Storage: jetstream.MemoryStorage,
		RePublish: &jetstream.RePublish{Source: ">", Destination: "_INBOX_rogue.>"}})
	require.NoError(t, err)
	_, err = ajs.CreateStream(ctx, jetstream.StreamConfig{Name: cluster.RepliesStream, Subjects: []string{"mdap.replies.>"}, Storage: jetstream.FileStorage})
	require.NoError(t, err)
	// Small, for the floods; routes enough for manyroutes.
	engine := cluster.ProvisionConfig{SampleBytes: floodBytes, KeyJobs: keyJobs, JobBytes: jobBytes, MaxRoutes: manyRoutes, MaxDrawers: floodDrawers, ReplyBytes: floodReplyBytes,
		RunKeyBytes: runBudget}
	require.NoError(t, cluster.Provision(ctx, ajs, engine))
	assertMdapStreams(t, ajs)
	agent, err := cluster.ServeAgent(ctx, ajs.Conn(), engine)
	require.NoError(t, err)
	t.Cleanup(agent.Stop)
	t.Run("owned", func(t *testing.T) {
		ownedScenario(t, url, seeds{coord: seedFiles[0], worker: seedFiles[1], rogue: seedFiles[2], admin: adminSeed})
	})
	t.Run("tenants", func(t *testing.T) { tenantScenario(t, url, tenants) })
	t.Run("runbudget", func(t *testing.T) {
		runBudgetScenario(t, url, budget)
		queueBudgetScenario(t, url, floods["qflood"], tasksShare, tasksFlood...)
		queueBudgetScenario(t, url, floods["rflood"], resultsShare, resultsFlood...)
		leaseBudgetScenario(t, url, floods["lflood"])
	})
	t.Run("replytheft", func(t *testing.T) { replyTheftScenario(t, url, tenants) })
	t.Run("steal", func(t *testing.T) { stealScenario(t, url, seedFiles[0], seedFiles[1], seedFiles[2]) })
	t.Run("flood", func(t *testing.T) {
		floodScenario(t, url, seeds{coord: seedFiles[0], worker: seedFiles[1], rogue: seedFiles[2], admin: adminSeed})
	})
	rogueScenario(t, url, seedFiles[0], seedFiles[1], seedFiles[2], adminSeed)
	t.Run("liar", func(t *testing.T) { liarScenario(t, url, seedFiles[0], seedFiles[2], true, seedFiles[1], seedFiles[3]) })
	t.Run("batchliar", func(t *testing.T) { batchLiarScenario(t, url, seedFiles[0], seedFiles[2], seedFiles[1], seedFiles[3]) })
	// After the scenarios that read every job (rogue): it leaves jobs
	// that do not decode on the route.
	t.Run("keyjobs", func(t *testing.T) { keyJobsScenario(t, url, tenants.thief, tenants.victim, seedFiles[1], adminSeed) })
	t.Run("version", func(t *testing.T) { versionScenario(t, url, seedFiles[1], seedFiles[0], adminSeed) })
	// Before manyroutes, which needs room for its routes.
	t.Run("routequota", func(t *testing.T) {
		routeQuotaScenario(t, url, seedFiles[2], seedFiles[3], adminSeed, cluster.DefaultRouteQuota, false)
	})
	// Before full, which needs its stream: one key over many routes.
	t.Run("manyroutes", func(t *testing.T) {
		manyRoutesScenario(t, url, tenants.thief, tenants.victim, seedFiles[1], adminSeed, engine, false)
	})
	// It purges the reply stream it fills.
	t.Run("repliesfull", func(t *testing.T) {
		fullRepliesScenario(t, url, seeds{coord: seedFiles[0], worker: seedFiles[1], rogue: seedFiles[2], admin: adminSeed})
	})
	// Last: it leaves the job stream full.
	t.Run("full", func(t *testing.T) {
		fullScenario(t, url, seeds{coord: seedFiles[0], worker: seedFiles[1], rogue: seedFiles[2], admin: adminSeed})
	})
}
