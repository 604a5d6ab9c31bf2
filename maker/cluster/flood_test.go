package cluster_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// floodBytes is the sample streams' bound in the flood tests; in it the
// engine takes the replies of floodDrawers Drawers at once, each reply
// at most floodReplyBytes, so that one worker identity may store
// min(DefaultReplyKeep, floodBytes / 2 / (floodDrawers × floodReplyBytes))
// = 4 replies for each Drawer.
const (
	floodBytes      = 1 << 20
	floodDrawers    = 8
	floodReplyBytes = 16 << 10
	floodReplyKeep  = 4
)

// startFloodServer starts an engine with roles whose sample streams hold
// floodBytes, serving two routes (more would leave a key less than one
// job of the largest size in half the job stream); its rogue is a worker
// identity of its own, beside the shared worker key.
func startFloodServer(t *testing.T) (string, seeds) {
	t.Helper()
	dir := t.TempDir()
	rogue, err := cluster.AddWorker(dir, "rogue")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{SampleBytes: floodBytes, MaxRoutes: 2, MaxDrawers: floodDrawers, ReplyBytes: floodReplyBytes}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL(), seeds{
		coord: cluster.SeedFile(dir, cluster.RoleCoordinator), worker: cluster.SeedFile(dir, cluster.RoleWorker),
		rogue: rogue, admin: cluster.SeedFile(dir, cluster.RoleAdmin),
	}
}

// flushThroughReconnects flushes nc, again after a reconnect: a flood
// on a loaded machine can block a write past the client's write timeout
// (Connect's FlusherTimeout), the client then reconnects, and nats.go
// tells a Flush waiting meanwhile "connection closed" though the
// connection goes on (CI saw it once under a load of 14).
func flushThroughReconnects(t *testing.T, nc *nats.Conn) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := nc.Flush()
		if err == nil {
			return
		}
		if nc.IsClosed() || time.Now().After(deadline) {
			require.NoError(t, err, "flush (closed: %v)", nc.IsClosed())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReplyFloodStallsNoRun: a worker identity floods replies many times
// the reply stream's size, before and during a run (issue 35, attack 5),
// on every Drawer's subject it can learn (the stream's state lists them)
// and on Drawers of its own invention: the run ends with the winners of
// an undisturbed run, no sample waiting out its timeout; a reply of an
// honest worker stored for a Drawer that has not taken it yet is still
// there after the flood (a stream dropping its oldest replies dropped
// it); the rogue stores at most floodReplyKeep replies a Drawer, within
// half the stream, its next refused, and none for a Drawer the engine
// did not make.
func TestReplyFloodStallsNoRun(t *testing.T) {
	t.Parallel()
	url, s := startFloodServer(t)
	floodScenario(t, url, s)
}

// idleDrawer asks the engine, as the coordinator of nc, for the reply
// consumer of a Drawer that never takes a reply, and returns its token
// (the subject token of its replies): replies to it stay stored, as those
// to a coordinator between two pulls.
func idleDrawer(t *testing.T, nc *nats.Conn) string {
	t.Helper()
	id := fmt.Sprintf("didle%d", time.Now().UnixNano())
	m, err := nc.Request("mdap.engine.replies."+identityOf(nc), []byte(`{"name":"`+id+`"}`), 10*time.Second)
	require.NoError(t, err)
	require.NotContains(t, string(m.Data), "error", "the engine made the reply consumer of %s", id)
	return replyTokenOf(id)
}

// replyTokenOf is the subject token of the Drawer whose reply consumer is
// named id: the first 32 hex digits of its SHA-256.
func replyTokenOf(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

// storedReplies is how many replies the reply stream holds on subjects
// matching filter, by subject.
func storedReplies(t *testing.T, js jetstream.JetStream, filter string) map[string]uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, cluster.RepliesStream)
	require.NoError(t, err)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	require.NoError(t, err)
	return info.State.Subjects
}

func floodScenario(t *testing.T, url string, s seeds) {
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 3, cfg)
	wnc, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	rogue, rjs := connectAs(t, url, s.rogue)
	id := identityOf(rogue) // a worker replies under its own identity only
	require.NotEqual(t, identityOf(wnc), id, "the rogue is an identity of its own")
	// The coordinator is connected before the flood, as the worker is: a
	// dial under the flood on a loaded machine can outlast the client's
	// dial timeout (load 22: "i/o timeout"), and what is shown is a run
	// under the flood, not a connection made during it.
	cnc, cjs := connectAs(t, url, s.coord)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// An honest reply stored for a Drawer that has not taken it yet.
	idle := idleDrawer(t, cnc)
	honest := "mdap.replies." + idle + ".w." + identityOf(wnc)
	_, err := wjs.Publish(ctx, "mdap.replies."+idle+".j1."+identityOf(wnc), []byte(`{"v":2,"id":"j1"}`))
	require.NoError(t, err, "an honest reply is stored")
	require.EqualValues(t, map[string]uint64{honest: 1}, storedReplies(t, rjs, honest))

	// The Drawers the rogue floods: the idle one, every one the stream
	// names (a worker also learns them from its jobs), and one made up.
	drawers := func() []string {
		ds := []string{"0123456789abcdef0123456789abcdef", idle}
		st, err := rjs.Stream(ctx, cluster.RepliesStream)
		if err != nil {
			return ds
		}
		for _, subj := range st.CachedInfo().Config.Subjects {
			if d, ok := strings.CutSuffix(strings.TrimPrefix(subj, "mdap.replies."), ".*.*"); ok {
				ds = append(ds, d)
			}
		}
		return ds
	}
	// Small replies, so a stream without bounds per worker would be full
	// to its last hundred bytes.
	junk := []byte(strings.Repeat("x", 100))
	var sent atomic.Int64
	flood := func(ctx context.Context) {
		ds := drawers()
		for i := 0; ctx.Err() == nil; i++ {
			if rogue.Publish(fmt.Sprintf("mdap.replies.%s.%d.%s", ds[i%len(ds)], i, id), junk) == nil {
				sent.Add(int64(len(junk)))
			}
			if i%1024 == 1023 {
				_ = rogue.Flush()
				time.Sleep(time.Millisecond) // a flood, not a CPU hog
				ds = drawers()               // the run's Drawer, once made
			}
		}
	}
	// Flooded before the run begins, and all along.
	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	ds := drawers()
	for i := 0; sent.Load() < 2*floodBytes; i++ {
		if rogue.Publish(fmt.Sprintf("mdap.replies.%s.pre%d.%s", ds[i%len(ds)], i, id), junk) == nil {
			sent.Add(int64(len(junk)))
		}
	}
	flushThroughReconnects(t, rogue)
	assert.EqualValues(t, map[string]uint64{honest: 1}, storedReplies(t, rjs, honest), "the honest reply stored before the flood is kept")
	// The rogue's room is its own, and bounded: floodReplyKeep replies
	// for each Drawer the engine made, none for one made up.
	_, err = rjs.Publish(ctx, "mdap.replies."+idle+".one-more."+id, junk)
	require.Error(t, err, "a reply past the rogue's room for the Drawer")
	assert.Contains(t, err.Error(), "maximum messages per subject exceeded")
	_, err = rjs.Publish(ctx, "mdap.replies.0123456789abcdef0123456789abcdef.j."+id, junk)
	assert.Error(t, err, "a reply to a Drawer the engine did not make finds no stream")
	mine := storedReplies(t, rjs, "mdap.replies.*.w."+id)
	assert.EqualValues(t, floodReplyKeep, mine["mdap.replies."+idle+".w."+id], "the rogue's replies for the idle Drawer: %v", mine)
	assert.NotContains(t, mine, "mdap.replies.0123456789abcdef0123456789abcdef.w."+id, "none for a Drawer made up")
	assert.LessOrEqual(t, len(mine), floodDrawers, "for the Drawers the engine serves only: %v", mine)
	for subj, n := range mine {
		assert.LessOrEqual(t, n, uint64(floodReplyKeep), subj)
	}
	wg.Go(func() { flood(fctx) })

	before := sent.Load()
	// The engine's default timeout (2 minutes), not a shorter one: under
	// the flood on a loaded machine a reply's publication can outlast the
	// worker's publish timeout (10 s; its job is handed back and answered
	// again, its reply late, not lost), and a coordinator's timeout of
	// 20 s, two such attempts, timed the sample out (load 20: 1 of 20
	// runs, drawer {Published:17 Replies:16 Duplicates:1 Withdrawn:1},
	// worker {Released:4 Redelivered:3}). A reply lost would cost its
	// sample that timeout: the run ends well within it.
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: cluster.DefaultTimeout})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	began := time.Now()
	_, gotSteps := solveHanoi(t, remote, 3, cfg)
	assert.Equal(t, wantSteps, gotSteps, "drawer %+v, worker %+v", d.Stats(), worker.Stats())
	assert.Less(t, time.Since(began), cluster.DefaultTimeout, "no sample waited out its timeout")
	assert.Greater(t, sent.Load()-before, int64(floodBytes/4), "the flood went on during the run")
	stop()
	wg.Wait()
	assert.EqualValues(t, map[string]uint64{honest: 1}, storedReplies(t, rjs, honest), "the honest reply is still stored after the flood")
	var total uint64
	for subj, n := range storedReplies(t, rjs, "mdap.replies.*.w."+id) {
		assert.LessOrEqual(t, n, uint64(floodReplyKeep), subj)
		total += n
	}
	assert.LessOrEqual(t, total*uint64(len(junk)), uint64(floodBytes/2), "one worker's replies stay within half the stream")
}

// TestFullReplyStreamFailsFastNamingIt: the admin fills the reply stream
// (one worker identity cannot: TestReplyFloodStallsNoRun) with replies
// to a Drawer that takes none; a coordinator's sample, whose reply the
// stream now refuses, fails within seconds with an error naming the
// stream and that it is full, not after its timeout; once the stream is
// purged, samples are drawn again.
func TestFullReplyStreamFailsFastNamingIt(t *testing.T) {
	t.Parallel()
	url, s := startFloodServer(t)
	fullRepliesScenario(t, url, s)
}

func fullRepliesScenario(t *testing.T, url string, s seeds) {
	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{})
	runWorker(t, worker)
	cnc, cjs := connectAs(t, url, s.coord)
	idle := idleDrawer(t, cnc)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Replies under many identities, until the stream refuses one for
	// want of room: of 4 KiB, then of 32 bytes, so that no reply fits.
	n := 0
	for _, size := range []int{4 << 10, 32} {
		junk := []byte(strings.Repeat("x", size))
		for ; ; n++ {
			_, err := ajs.Publish(ctx, fmt.Sprintf("mdap.replies.%s.j.fill%d", idle, n), junk)
			if err != nil {
				require.Contains(t, err.Error(), "maximum bytes exceeded")
				break
			}
			require.Less(t, n, 2*floodBytes/size, "the stream fills")
		}
	}
	st, err := ajs.Stream(ctx, cluster.RepliesStream)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Purge(context.Background()) })

	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: time.Minute})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	began := time.Now()
	_, err = remote.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	require.ErrorIs(t, err, cluster.ErrEngine)
	assert.Contains(t, err.Error(), cluster.RepliesStream)
	assert.Contains(t, err.Error(), "full")
	assert.Less(t, time.Since(began), 15*time.Second, "not the minute of its timeout")

	require.NoError(t, st.Purge(ctx))
	time.Sleep(1100 * time.Millisecond) // the Drawer's last look at the stream is forgotten
	_, err = remote.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	assert.NotErrorIs(t, err, cluster.ErrEngine, "answered (by the model's error: not a step) once the stream has room")
}

// TestFullJobStreamFailsFastNamingIt: the admin fills the job stream
// with jobs for a route nobody pulls (one key cannot:
// TestOneKeyCannotFillTheJobStream); a coordinator's sample then fails at
// once with an error naming the stream and that it is full, not after
// its timeout.
func TestFullJobStreamFailsFastNamingIt(t *testing.T) {
	t.Parallel()
	url, s := startFloodServer(t)
	fullScenario(t, url, s)
}

func fullScenario(t *testing.T, url string, s seeds) {
	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{})
	runWorker(t, worker)
	flooder, ajs := connectAs(t, url, s.admin)
	idle := idleRouteSubject(t, ajs, flooder)
	// Small jobs, so the stream is full to its last hundred bytes, each
	// on a subject of its own (a subject holds a few only).
	junk := []byte(strings.Repeat("x", 100))
	for i := 0; i < 2*floodBytes/len(junk); i++ {
		require.NoError(t, flooder.Publish(fmt.Sprintf("%s%d", idle, i), junk))
	}
	flushThroughReconnects(t, flooder)

	_, cjs := connectAs(t, url, s.coord)
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: time.Minute})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	began := time.Now()
	_, err = remote.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	require.ErrorIs(t, err, cluster.ErrEngine)
	assert.Contains(t, err.Error(), cluster.JobsStream)
	assert.Contains(t, err.Error(), "full")
	assert.Less(t, time.Since(began), 15*time.Second, "not the minute of its timeout")
}

// TestDrawersPastMaxDrawersAreRefused: the engine takes the replies of at
// most ProvisionConfig.MaxDrawers Drawers; one more is refused, naming
// MaxDrawers, until one is closed, whose place it then takes. The Drawers
// are three identities' (run keys), each within its DrawerQuota.
func TestDrawersPastMaxDrawersAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var seeds []string
	for _, run := range []string{"a", "b", "c"} {
		seed, err := cluster.AddRunCoordinator(dir, run)
		require.NoError(t, err)
		seeds = append(seeds, seed)
	}
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: cluster.ProvisionConfig{MaxDrawers: 2}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	var js []jetstream.JetStream
	for _, seed := range seeds {
		_, j := connectAs(t, srv.ClientURL(), seed)
		js = append(js, j)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := newDrawer(t, js[0], cluster.DrawerConfig{})
	newDrawer(t, js[1], cluster.DrawerConfig{})
	_, err = cluster.NewDrawer(ctx, js[2], cluster.DrawerConfig{})
	require.ErrorIs(t, err, cluster.ErrEngine)
	assert.Contains(t, err.Error(), "MaxDrawers")
	require.NoError(t, first.Close())
	third, err := cluster.NewDrawer(ctx, js[2], cluster.DrawerConfig{})
	require.NoError(t, err, "a closed Drawer makes room")
	require.NoError(t, third.Close())
}

// TestAWorkerWaitsForRoomForItsReply: with room for one reply of a worker
// to a Drawer (ReplyKeep 1), a worker answering many jobs of one Drawer
// at once waits for the Drawer to take its replies instead of handing
// their jobs back: the run is an undisturbed run, no job handed back.
func TestAWorkerWaitsForRoomForItsReply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: cluster.ProvisionConfig{ReplyKeep: 1}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	cfg := vote.Config{K: 3, Parallel: 6}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 3, cfg)
	_, wjs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleWorker))
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 8})
	runWorker(t, worker)
	_, cjs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Spread: true})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	_, gotSteps := solveHanoi(t, remote, 3, cfg)
	assert.Equal(t, wantSteps, gotSteps)
	assert.Zero(t, worker.Stats().Released, "no job handed back for want of room: worker %+v", worker.Stats())
}
