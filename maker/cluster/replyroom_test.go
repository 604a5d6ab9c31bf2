package cluster_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// An honest Drawer's backpressure: a worker's replies to one Drawer take
// a room of ReplyKeep (4) at a time, so under a burst most wait for room,
// parked, in the order they came (parked.go). None may be handed back:
// review8 found, while a waiting reply held its place and hundreds
// retried in no order, a burst of 256 on a loaded machine with 117 jobs
// handed back (and the Drawer taken for not reading, 10 s), and a Drawer
// 100 ms from the engine, 128 at once, 3 (13 before the 5 s rule).

// burstTo makes burst calls at once to remote and returns the slowest.
func burstTo(remote llms.Model, burst int) time.Duration {
	var slowest time.Duration
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range burst {
		wg.Go(func() {
			start := time.Now()
			msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprintf("call %d", i))}
			_, _ = remote.GenerateContent(context.Background(), msgs)
			mu.Lock()
			slowest = max(slowest, time.Since(start))
			mu.Unlock()
		})
	}
	wg.Wait()
	return slowest
}

// honestStage is an engine with roles and one worker of inflight places
// whose warnings go to logs; coordinatorURL maps its client URL to the
// one a coordinator dials.
func honestStage(t *testing.T, inflight int, logs *lockedBuffer, coordinatorURL func(string) string) (*cluster.Worker, *cluster.Drawer, llms.Model) {
	t.Helper()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	_, wjs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleWorker))
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: inflight, Logger: warnLogger(logs)})
	runWorker(t, worker)
	_, cjs := connectAs(t, coordinatorURL(srv.ClientURL()), cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: time.Minute})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	return worker, d, remote
}

// TestAnHonestBigBurstHandsNoJobBack: 256 calls at once to a worker of
// 256 places (the most one pull through the agent takes).
func TestAnHonestBigBurstHandsNoJobBack(t *testing.T) {
	t.Parallel()
	const burst = 256
	var logs lockedBuffer
	worker, d, remote := honestStage(t, burst, &logs, func(u string) string { return u })
	slowest := burstTo(remote, burst)
	t.Logf("the slowest call took %s; drawer %+v; worker %+v; the worker's warnings (%d bytes):\n%.2000s", slowest, d.Stats(), worker.Stats(), len(logs.String()), logs.String())
	assert.Zero(t, worker.Stats().Released, "an honest Drawer's backpressure hands no job back")
	assert.Equal(t, int64(burst), d.Stats().Replies, "every call answered by its first delivery")
}

// TestAFarHonestDrawerHandsNoJobBack: a coordinator 100 ms from the
// engine (a laptop reaching machine A, docs/nats.md) makes 128 calls at
// once to a worker of 128 places: its room frees about 4 replies a round
// trip, so the last replies wait seconds for room.
func TestAFarHonestDrawerHandsNoJobBack(t *testing.T) {
	t.Parallel()
	const burst = 128
	var logs lockedBuffer
	worker, d, remote := honestStage(t, burst, &logs, func(u string) string {
		return slowLink(t, strings.TrimPrefix(u, "nats://"), 100*time.Millisecond)
	})
	slowest := burstTo(remote, burst)
	t.Logf("the slowest call took %s; drawer %+v; worker %+v; the worker's warnings (%d bytes):\n%.1500s", slowest, d.Stats(), worker.Stats(), len(logs.String()), logs.String())
	assert.Zero(t, worker.Stats().Released, "an honest Drawer's backpressure hands no job back")
	assert.Equal(t, int64(burst), d.Stats().Replies, "every call answered by its first delivery")
}

// slowLink is a TCP proxy to addr that delays each direction by delay
// (a coordinator far from the engine); it returns its nats:// URL.
func slowLink(t *testing.T, addr string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	pipe := func(dst, src net.Conn) {
		type chunk struct {
			b  []byte
			at time.Time
		}
		ch := make(chan chunk, 1024)
		wg.Go(func() {
			defer close(ch)
			for {
				buf := make([]byte, 32<<10)
				n, err := src.Read(buf)
				if n > 0 {
					ch <- chunk{buf[:n], time.Now().Add(delay)}
				}
				if err != nil {
					return
				}
			}
		})
		wg.Go(func() {
			defer func() { _ = dst.Close() }()
			for c := range ch {
				time.Sleep(time.Until(c.at))
				if _, err := dst.Write(c.b); err != nil {
					return
				}
			}
		})
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			pipe(s, c)
			pipe(c, s)
		}
	})
	return "nats://" + ln.Addr().String()
}

// bigAnswer is a model whose answer is size bytes, counting its calls.
type bigAnswer struct {
	*sim.Model
	size  int
	calls *atomic.Int64
}

func (m bigAnswer) Identity() string { return maker.ModelIdentity(m.Model) }

func (m bigAnswer) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls.Add(1)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: strings.Repeat("x", m.size)}}}, nil
}

// TestAReplyTooLargeIsCalledOnce (review8): a reply larger than the
// engine stores (DefaultReplyBytes, 1 MiB: a run key's prompts may ask
// for long answers) was handed back for redelivery, and each delivery
// called the model again, up to MaxDeliver (10) times, the call failing
// at its timeout. Now its samples fail at once, saying why.
func TestAReplyTooLargeIsCalledOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	var calls atomic.Int64
	_, wjs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleWorker))
	worker := newWorker(t, wjs, bigAnswer{simModel(t, 5), 3 << 19, &calls}, cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	_, cjs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 10 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	start := time.Now()
	_, err = remote.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "a long answer")})
	took := time.Since(start)
	t.Logf("the call took %s (err %v); %d model calls; worker %+v", took, err, calls.Load(), worker.Stats())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than the engine takes")
	assert.Equal(t, int64(1), calls.Load(), "one model call for one job whose reply cannot be stored")
	assert.Less(t, took, 5*time.Second, "the call fails at once, not at its timeout")
}

// TestAWorkerOfManyPlacesServesThroughTheAgent (review8): the agent
// takes a pull of at most 256 jobs, and a worker pulled for all its free
// places at once, so a worker of 257 places (WorkerConfig allows 4096)
// never got a job on a server with roles. It pulls at most 256 at once.
func TestAWorkerOfManyPlacesServesThroughTheAgent(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	worker, d, remote := honestStage(t, 257, &logs, func(u string) string { return u })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := remote.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "one call")})
	t.Logf("err %v; drawer %+v; worker %+v", err, d.Stats(), worker.Stats())
	assert.Equal(t, int64(1), d.Stats().Replies, "the worker of 257 places answered the call")
}
