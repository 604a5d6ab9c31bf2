package cluster_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// deadTTL is the lease TTL of the tests' journals and the ack wait of
// their task queues, when a test waits for a dead coordinator's to
// expire. A live coordinator refreshes both every third of it, so it
// must outlast the stalls of a loaded machine: with 1 s, a CPU hog made
// live coordinators lose their leases ("the engine did not answer for
// 1s"; "taken over by another coordinator") and their tasks go to the
// other coordinator.
const deadTTL = 5 * time.Second

// rawPullsOnly is the NoWorker of the Drawers whose route only raw
// connections pull (pullAll, newRawPuller, a fetch by hand; its Worker never
// runs): they listen to no cancellation notice, so
// the Drawer's check that a worker serves the route, at a moment no pull
// waits on JetStream (the sitter past its cap fetches nothing; in the
// nak case nothing pulls for 4 s), found none, failed the calls with
// ErrNoWorker and withdrew their jobs (under load, the sitter test then
// missed 1 to 4 of its queued jobs in 3 runs of 8:
// TestASitterPastItsHandoffCapStallsNoOtherRun).
const rawPullsOnly = -1

// startServer starts an embedded server on a free loopback port with a
// temporary store; it is shut down when the test ends.
func startServer(t testing.TB) *cluster.Server {
	t.Helper()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return srv
}

// connect opens a client connection and its JetStream context.
func connect(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	// The client's 2 s to connect is not enough on a loaded machine
	// ("i/o timeout" under a CPU hog).
	nc, err := cluster.Connect(url, t.Name(), nats.Timeout(30*time.Second))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return nc, js
}

// runWorker runs w until the test ends (or stop is called) and checks
// that Run returned nil.
func runWorker(t testing.TB, w *cluster.Worker) (stop func()) {
	t.Helper()
	return runWorkerIn(t, context.Background(), w)
}

// runWorkerIn is runWorker with Run's context under parent: ending
// parent begins the stop, and stop waits for its end.
func runWorkerIn(t testing.TB, parent context.Context, w *cluster.Worker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	var wg sync.WaitGroup
	var err error
	wg.Go(func() { err = w.Run(ctx) })
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			require.NoError(t, err)
		})
	}
	t.Cleanup(stop)
	return stop
}

// newDrawer opens a Drawer closed when the test ends.
func newDrawer(t testing.TB, js jetstream.JetStream, cfg cluster.DrawerConfig) *cluster.Drawer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := cluster.NewDrawer(ctx, js, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

func newWorker(t testing.TB, js jetstream.JetStream, m llms.Model, cfg cluster.WorkerConfig) *cluster.Worker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := cluster.NewWorker(ctx, js, m, cfg)
	require.NoError(t, err)
	return w
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func jsonMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
