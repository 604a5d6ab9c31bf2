package cluster_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestUndecodableReplyUnderTheLeaseFailsTheSampleAtOnce: a worker holding
// a job (its lease) answers it with a reply that does not decode (no
// samples, another version) or answers another number of samples: the
// sample fails at once with ErrUndecodable naming the worker, and the
// reply is counted Bad; it used to be dropped, and the sample waited for
// its timeout (issue 35, attack 2).
func TestUndecodableReplyUnderTheLeaseFailsTheSampleAtOnce(t *testing.T) {
	t.Parallel()
	for name, bad := range map[string]func(j cluster.Job) any{
		"no samples": func(j cluster.Job) any {
			return map[string]any{"v": cluster.WireVersion, "id": j.ID, "lease": j.Lease, "worker": "liar", "samples": []any{}}
		},
		"another version": func(j cluster.Job) any {
			return map[string]any{"v": 99, "id": j.ID, "lease": j.Lease, "worker": "liar", "samples": "what"}
		},
		"too many samples": func(j cluster.Job) any {
			return cluster.Reply{Version: cluster.WireVersion, ID: j.ID, Lease: j.Lease, Worker: "liar",
				Samples: make([]cluster.SampleReply, len(j.Samples)+1)}
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := startServer(t)
			model := simModel(t, 5)
			_, wjs := connect(t, srv.ClientURL())
			newWorker(t, wjs, model, cluster.WorkerConfig{}) // makes the route's consumer; never runs
			ctx := context.Background()
			cons, err := wjs.Consumer(ctx, cluster.JobsStream, "w-"+cluster.RouteToken(model.Identity()))
			require.NoError(t, err)
			var wg sync.WaitGroup
			defer wg.Wait()
			wg.Go(func() {
				batch, err := cons.Fetch(1, jetstream.FetchMaxWait(20*time.Second))
				if !assert.NoError(t, err) {
					return
				}
				for msg := range batch.Messages() {
					var job cluster.Job
					if assert.NoError(t, json.Unmarshal(msg.Data(), &job)) {
						data, err := json.Marshal(bad(job))
						require.NoError(t, err)
						_, err = wjs.Publish(ctx, job.ReplyTo, data)
						assert.NoError(t, err)
					}
					_ = msg.Ack()
				}
			})

			_, cjs := connect(t, srv.ClientURL())
			d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: time.Minute, NoWorker: rawPullsOnly})
			remote, err := d.Model(model.Identity())
			require.NoError(t, err)
			began := time.Now()
			_, err = remote.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
			require.ErrorIs(t, err, cluster.ErrUndecodable)
			assert.Contains(t, err.Error(), "liar")
			assert.Less(t, time.Since(began), 15*time.Second, "not the minute of its timeout")
			assert.Equal(t, int64(1), d.Stats().Bad)
		})
	}
}
