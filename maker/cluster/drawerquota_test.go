package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneIdentityCannotTakeEveryDrawer: a coordinator identity (a run
// key) asks the engine for 40 Drawers' reply consumers, more than the
// engine serves (MaxDrawers, 32), which would refuse every other
// coordinator's Drawer for an hour. The engine serves the first
// DefaultDrawerQuota and refuses the rest, naming the quota; a Drawer
// already served still costs it nothing, and another identity's Drawer is
// served. It cannot ask in another identity's name (the server refuses
// the subject), nor in none (the engine answers that it must upgrade).
func TestOneIdentityCannotTakeEveryDrawer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rogueSeed, err := cluster.AddRunCoordinator(dir, "rogue")
	require.NoError(t, err)
	honestSeed, err := cluster.AddRunCoordinator(dir, "honest")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rogue, _ := connectAs(t, srv.ClientURL(), rogueSeed)
	key := identityOf(rogue)
	ask := func(subject, id string) (string, error) {
		data, _ := json.Marshal(map[string]string{"name": id})
		m, err := rogue.RequestWithContext(ctx, subject, data)
		if err != nil {
			return "", err
		}
		var resp struct {
			Error string `json:"error"`
		}
		require.NoError(t, json.Unmarshal(m.Data, &resp))
		return resp.Error, nil
	}
	served, refused := 0, 0
	var refusal string
	for i := range 40 {
		msg, err := ask("mdap.engine.replies."+key, fmt.Sprintf("drogue%d", i))
		require.NoError(t, err)
		if msg == "" {
			served++
			assert.Zero(t, refused, "Drawer %d served after a refusal", i)
			continue
		}
		refused++
		refusal = msg
	}
	assert.Equal(t, cluster.DefaultDrawerQuota, served, "the Drawers of one identity served")
	assert.Equal(t, 40-served, refused)
	assert.Contains(t, refusal, "quota")
	assert.Contains(t, refusal, "--drawer-quota")
	msg, err := ask("mdap.engine.replies."+key, "drogue0")
	require.NoError(t, err)
	assert.Empty(t, msg, "a Drawer already served costs nothing")

	// Another identity's Drawer is served.
	_, hjs := connectAs(t, srv.ClientURL(), honestSeed)
	honest, err := cluster.NewDrawer(ctx, hjs, cluster.DrawerConfig{})
	require.NoError(t, err, "another identity's Drawer")
	require.NoError(t, honest.Close())

	// Not in another's name (the server refuses the publication, so no
	// answer comes), nor in none.
	honestNC, _ := connectAs(t, srv.ClientURL(), honestSeed)
	sctx, scancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = rogue.RequestWithContext(sctx, "mdap.engine.replies."+identityOf(honestNC), []byte(`{"name":"dstolen"}`))
	scancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "in another's name: refused")
	msg, err = ask("mdap.engine.replies", "dnone")
	require.NoError(t, err)
	assert.Contains(t, msg, "upgrade", "in none")
	_, ajs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	for _, id := range []string{"dstolen", "dnone"} {
		_, err := ajs.Consumer(ctx, cluster.RepliesStream, id)
		assert.Error(t, err, "no reply consumer %s", id)
	}
}

// TestDrawerQuotaSurvivesTheEnginesRestart: a coordinator identity takes
// its quota of Drawers; the engine (its agent with it) starts again on
// the same store (durable sample streams, so the reply consumers
// persist). The identity still gets no Drawer past its quota: the count
// is read from the consumers made at its request, not from the agent's
// memory.
func TestDrawerQuotaSurvivesTheEnginesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rogueSeed, err := cluster.AddRunCoordinator(dir, "rogue")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	store := t.TempDir()
	start := func() *cluster.Server {
		srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: store, Roles: keys,
			Provision: cluster.ProvisionConfig{DurableSamples: true, DrawerQuota: 2}})
		require.NoError(t, err)
		t.Cleanup(srv.Shutdown)
		return srv
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ask := func(srv *cluster.Server, prefix string) (served int, refusal string) {
		rogue, _ := connectAs(t, srv.ClientURL(), rogueSeed)
		defer rogue.Close()
		for i := range 4 {
			m, err := rogue.RequestWithContext(ctx, "mdap.engine.replies."+identityOf(rogue), []byte(fmt.Sprintf(`{"name":"d%s%d"}`, prefix, i)))
			require.NoError(t, err)
			var resp struct {
				Error string `json:"error"`
			}
			require.NoError(t, json.Unmarshal(m.Data, &resp))
			if resp.Error == "" {
				served++
			} else {
				refusal = resp.Error
			}
		}
		return served, refusal
	}
	srv := start()
	served, refusal := ask(srv, "first")
	assert.Equal(t, 2, served, "before the restart")
	assert.Contains(t, refusal, "--drawer-quota")
	srv.Shutdown()

	srv = start()
	served, refusal = ask(srv, "second")
	assert.Zero(t, served, "after the restart: the quota is still taken")
	assert.Contains(t, refusal, "--drawer-quota")
}

// TestOneRunKeyShutsNoOtherRunOutOfDrawers: review3. The holder of one
// run's key asks the engine (mdap.engine.replies.<its key>) for reply
// consumers under names of its own choosing until the engine refuses,
// naming the quota (DefaultDrawerQuota, well below MaxDrawers), and keeps
// asking again for the names it holds (each ask accepted, so they are
// never left unused for an hour). Another run's coordinator still gets a
// Drawer. (Before the quota it took all MaxDrawers, and every other run
// was refused a Drawer as long as it kept asking.)
func TestOneRunKeyShutsNoOtherRunOutOfDrawers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	tnc, _ := connectAs(t, url, s.thief)
	_, vjs := connectAs(t, url, s.victim)

	ask := func(name string) string {
		m, err := tnc.Request("mdap.engine.replies."+identityOf(tnc), []byte(`{"name":"`+name+`"}`), 10*time.Second)
		require.NoError(t, err)
		return string(m.Data)
	}
	held := 0
	for i := range cluster.DefaultMaxDrawers + 8 {
		if resp := ask(fmt.Sprintf("dthief%d", i)); strings.Contains(resp, "error") {
			require.Contains(t, resp, "quota", "the thief's ask %d", i)
			break
		}
		held++
	}
	t.Logf("the thief's run key holds %d Drawers", held)
	// The thief keeps them: asking again for its own names is accepted.
	for i := range held {
		require.NotContains(t, ask(fmt.Sprintf("dthief%d", i)), "error")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d, err := cluster.NewDrawer(ctx, vjs, cluster.DrawerConfig{})
	require.NoError(t, err, "another run's coordinator gets a Drawer while one run key holds %d", held)
	require.NoError(t, d.Close())
}
