package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunEngineNotesThenPrintsItsURLAndServesUntilCancelled: started
// sees the engine before anything is said; the notes say where it serves
// and its store, the URL is written last, and the engine serves until
// the context ends, then says it stops.
func TestRunEngineNotesThenPrintsItsURLAndServesUntilCancelled(t *testing.T) {
	c := cluster.DefaultEngine()
	c.Addr, c.Store, c.Auth, c.Token = "127.0.0.1:0", t.TempDir(), cluster.AuthToken, "secret"
	var out syncBuffer
	notes := make(chan string, 8)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	var url string
	go func() {
		done <- cluster.RunEngine(ctx, c, nil, &out, func(format string, args ...any) { notes <- fmt.Sprintf(format, args...) }, func(e *cluster.Engine) error {
			url = e.ClientURL()
			assert.Empty(t, notes, "nothing said before started")
			return nil
		})
	}()
	var serving string
	select {
	case serving = <-notes:
	case err := <-done:
		t.Fatalf("RunEngine returned before its context ended: %v", err)
	}
	assert.True(t, strings.HasPrefix(serving, "JetStream serving nats://127.0.0.1:"), serving)
	assert.Contains(t, serving, c.Store)
	<-notes // the credentials' note
	require.Eventually(t, func() bool { return out.String() != "" }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, url+"\n", out.String())
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, "stopping", <-notes)
}

// TestRunEngineReturnsStartedsErrorAndStops: started's error is returned
// as it is, nothing said, and the engine's port is free again.
func TestRunEngineReturnsStartedsErrorAndStops(t *testing.T) {
	c := cluster.DefaultEngine()
	c.Addr, c.Store, c.Auth, c.Token = "127.0.0.1:0", t.TempDir(), cluster.AuthToken, "secret"
	boom := errors.New("boom")
	var srv *cluster.Server
	var out bytes.Buffer
	err := cluster.RunEngine(t.Context(), c, nil, &out, func(string, ...any) { t.Error("a note after a failed start") }, func(e *cluster.Engine) error {
		srv = e.Server
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Empty(t, out.String())
	assert.Error(t, srv.Ready(), "stopped")

	c.Store = ""
	require.ErrorIs(t, cluster.RunEngine(t.Context(), c, nil, &out, nil, nil), cluster.ErrConfig, "Validate's, before anything starts")
}
