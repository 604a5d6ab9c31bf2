package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheHandBackProbeStoresNothing: replyIDTaken tells whether something
// is stored under a job's reply id, and the probe itself is never stored
// nor leaves the id taken: a reply published under the id after a probe
// that found nothing is stored, not dropped as a duplicate. On a single
// server (a stream with no Raft group) and on a 3-node cluster (a
// replicated stream, whose leader checks before it proposes): the two
// look expectations up in different orders (a stream sequence expected
// is refused before the id is looked up on the one, after on the other).
func TestTheHandBackProbeStoresNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		js   func(t *testing.T) jetstream.JetStream
		n    int
	}{
		{"server", func(t *testing.T) jetstream.JetStream {
			srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
			require.NoError(t, err)
			t.Cleanup(srv.Shutdown)
			nc, err := nats.Connect(srv.ClientURL())
			require.NoError(t, err)
			t.Cleanup(nc.Close)
			js, err := jetstream.New(nc)
			require.NoError(t, err)
			return js
		}, 1},
		{"cluster", func(t *testing.T) jetstream.JetStream { return startLoopCluster(t, 3).connect(0) }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			js := tc.js(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			st, err := js.CreateStream(ctx, repliesStreamConfig(tc.n))
			require.NoError(t, err)
			a := &Agent{js: js, ctx: ctx, log: slog.New(slog.DiscardHandler)}
			tok := replyToken("d1")
			job := func(n string) []byte {
				b, _ := json.Marshal(actedJob{ID: "j" + n, ReplyTo: repliesSubject + tok + ".j" + n, Lease: "lease-" + n})
				return b
			}
			// Nothing under the id: the probe says so, twice, and the
			// worker's reply is then stored.
			for range 2 {
				assert.False(t, a.replyIDTaken(job("1"), "UWORKER"))
			}
			ack, err := js.Publish(ctx, repliesSubject+tok+".j1.UWORKER", []byte(`{"id":"j1"}`), jetstream.WithMsgID("lease-1"))
			require.NoError(t, err)
			assert.False(t, ack.Duplicate, "the probe left the reply id taken")
			// Now something is: the probe says so, on any worker's subject.
			assert.True(t, a.replyIDTaken(job("1"), "UWORKER"))
			assert.True(t, a.replyIDTaken(job("1"), "UOTHER"))
			info, err := st.Info(ctx)
			require.NoError(t, err)
			assert.Equal(t, uint64(1), info.State.Msgs, "only the reply is stored")
			// An id taken on another Drawer's subject is taken.
			_, err = js.Publish(ctx, repliesSubject+replyToken("d2")+".x.UOTHER", []byte(`{}`), jetstream.WithMsgID("lease-2"))
			require.NoError(t, err)
			assert.True(t, a.replyIDTaken(job("2"), "UWORKER"))
		})
	}
}
