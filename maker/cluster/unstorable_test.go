package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/tmc/langchaingo/llms"
)

// TestJobsWithUnstorableRepliesSlowNoOtherRun: review3. The holder of one
// run's key queues jobs on a served route, within its bound of jobs, as
// fast as it may, each well formed but with a reply the engine will not
// store:
//   - to a Drawer of its own invention (mdap.replies.<32 hex>.<job>): no
//     stream takes it. The agent terminates such a job before any worker
//     sees it: no model call for it at all.
//   - on a subject no worker may publish on: no Drawer's, so the agent
//     terminates it too (a worker would refuse it, decodeJob).
//   - to its own Drawer, which it never reads: the worker's room there
//     (ReplyKeep, 4) fills; the next replies wait for room parked, up to
//     the key's parking (max(Inflight, 4)), with the jobs already in
//     their model calls when it filled (Inflight), and the key's further
//     jobs are handed back before their model call; after roomWait (2 s)
//     with no room the worker hands back that Drawer's jobs for
//     notReadingFor (10 s). So at most ReplyKeep + max(Inflight, 4) +
//     Inflight of its jobs reach the model per 10 s.
//
// Beside it another run on the same route is an undisturbed run, none of
// its calls waiting out its timeout. (Before, each delivery held a worker
// place 5 s, up to 10 deliveries a job, and the other run got no reply
// within 20 s.)
func TestJobsWithUnstorableRepliesSlowNoOtherRun(t *testing.T) {
	t.Parallel()
	for name, replyTo := range map[string]string{
		"invented drawer":   "mdap.replies.%032x.thief%d",
		"forbidden subject": "mdap.nowhere%d.thief%d",
		"own unread drawer": "",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			unstorableRepliesScenario(t, replyTo)
		})
	}
}

// thiefCounted is a simulated model that counts its calls with no
// message: the thief's jobs (the other run's prompts are never empty).
type thiefCounted struct {
	*sim.Model
	thief *atomic.Int64
}

func (m thiefCounted) Identity() string { return maker.ModelIdentity(m.Model) }

func (m thiefCounted) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if len(msgs) == 0 {
		m.thief.Add(1)
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

func unstorableRepliesScenario(t *testing.T, replyTo string) {
	const inflight = 4
	var thiefCalls atomic.Int64
	a := newRouteAttack(t, thiefCounted{simModel(t, 5), &thiefCalls}, cluster.WorkerConfig{Inflight: inflight})
	own := replyTo == ""
	if own {
		_, tok := a.ownDrawer(t)
		replyTo = "mdap.replies." + tok + ".thief%[2]d"
	}
	began := time.Now()
	queued := a.flood(t, func(i int) string { return fmt.Sprintf(replyTo, i+1, i) })
	time.Sleep(time.Second) // the thief's jobs queued first

	d, remote := a.victim(t)
	var calls int64
	var elapsed time.Duration
	a.checkVictim(t, d, remote, 20*time.Second, func(took time.Duration) {
		calls, elapsed = thiefCalls.Load(), time.Since(began)
		t.Logf("the other run took %s; the thief queued %d jobs, %d reached the model in %s; drawer %+v; worker %+v",
			took, queued.Load(), calls, elapsed, d.Stats(), a.worker.Stats())
	})
	if !own {
		assert.Zero(t, calls, "no job of the thief reached the model")
		return
	}
	const replyKeep, notReadingFor = 4, 10 * time.Second // the engine's and the worker's
	periods := 1 + int64(elapsed/notReadingFor)
	const parkRoom = max(inflight, 4)
	assert.LessOrEqual(t, calls, (replyKeep+parkRoom+inflight)*periods,
		"the thief's jobs that reached the model: its room's and its parking's worth per %s", notReadingFor)
}
