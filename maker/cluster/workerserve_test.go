package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeWorkerSaysWhatItServesAndWhatItDid: started sees the worker
// before the serving note, which names the route, the engine, the calls
// at a time and the ack wait; once the context ends the worker says its
// stats and returns nil. Refused settings come back before any
// connection, and started's error as it is.
func TestServeWorkerSaysWhatItServesAndWhatItDid(t *testing.T) {
	noCredsAround(t)
	srv := startServer(t)
	cfg := cluster.WorkerConfig{URL: srv.ClientURL(), Route: "r", Inflight: 2}
	m := refusingModel{id: "m"}
	ctx, cancel := context.WithCancel(t.Context())
	notes := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		done <- cluster.ServeWorker(ctx, m, cfg, func(format string, args ...any) { notes <- fmt.Sprintf(format, args...) }, func(w *cluster.Worker) error {
			assert.Empty(t, notes, "nothing said before started")
			return w.Connected()
		})
	}()
	select {
	case note := <-notes:
		assert.Equal(t, fmt.Sprintf(`serving "r" from %s, 2 calls at a time, jobs of a dead worker back after %s; stop with Ctrl-C`, srv.ClientURL(), cluster.DefaultAckWait), note)
	case err := <-done:
		t.Fatalf("ServeWorker returned before its context ended: %v", err)
	}
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, "stopped: served 0 (0 failed), withdrawn 0, handed back 0, redelivered to it 0", <-notes)

	boom := errors.New("boom")
	require.ErrorIs(t, cluster.ServeWorker(t.Context(), m, cfg, nil, func(*cluster.Worker) error { return boom }), boom)
	cfg.Inflight = -1
	assert.Equal(t, "Inflight", fielderr.As(cluster.ServeWorker(t.Context(), m, cfg, nil, nil)).Fields[0].Name)
}
