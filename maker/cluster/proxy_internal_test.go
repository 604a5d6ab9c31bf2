package cluster

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDelivery is a job the agent holds for a worker; it records the
// acts done on it (the methods not overridden are never called).
type fakeDelivery struct {
	jetstream.Msg
	acked, naked int
}

func (m *fakeDelivery) Ack() error { m.acked++; return nil }
func (m *fakeDelivery) Nak() error { m.naked++; return nil }

// Data: no job the agent would deliver, so an ack is not checked
// (ackcheck.go).
func (m *fakeDelivery) Data() []byte { return nil }

// TestActRefusesAnUnknownOpAndKeepsTheDelivery: a worker's act with an
// op the agent does not know is refused, and the delivery stays held,
// so the worker's next (valid) act on it still reaches the job; an
// unknown op used to drop the delivery, leaving the job to come back
// only after its ack wait.
func TestActRefusesAnUnknownOpAndKeepsTheDelivery(t *testing.T) {
	t.Parallel()
	msg := &fakeDelivery{}
	a := &Agent{work: deliveries{held: map[string]*held{"h1": {msg: msg, id: "w1"}}}}
	err := a.act("w1", ackRequest{Handle: "h1", Op: "bogus"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"bogus"`)
	require.NoError(t, a.act("w1", ackRequest{Handle: "h1", Op: "ack"}), "the delivery is still held")
	assert.Equal(t, 1, msg.acked)
	assert.Zero(t, msg.naked)
	assert.Error(t, a.act("w1", ackRequest{Handle: "h1", Op: "ack"}), "an acknowledged delivery is gone")
}

// TestPulledJobIsTakenBeforeThePullEnds: a job the agent forwards is
// handed to the worker as it arrives, while the pull is still open for
// the rest of its places. pullViaAgent used to collect the jobs and hand
// them over when the pull ended: a worker with two free places that got
// one job held it for up to the pull's wait (a second) before its model
// call, on every step of a run on a server with roles.
func TestPulledJobIsTakenBeforeThePullEnds(t *testing.T) {
	t.Parallel()
	_, nc, _ := serveInternal(t)
	w := &Worker{nc: nc, route: "r", workPrefix: "test.work.w1."}
	// The agent: one job at once, the end of the pull only when told.
	endPull := make(chan struct{})
	sub, err := nc.Subscribe(w.workPrefix+"pull", func(m *nats.Msg) {
		job := nats.NewMsg(m.Reply)
		job.Header.Set(handleHeader, "h1")
		job.Header.Set(deliveredHeader, "1")
		job.Data = []byte("the job")
		assert.NoError(t, nc.PublishMsg(job))
		go func() {
			<-endPull
			end := nats.NewMsg(m.Reply)
			end.Header.Set(endHeader, "1")
			assert.NoError(t, nc.PublishMsg(end))
		}()
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	taken := make(chan heldJob, 2)
	pulled := make(chan error, 1)
	go func() { pulled <- w.pullViaAgent(context.Background(), 2, time.Minute, func(j heldJob) { taken <- j }) }()
	select {
	case j := <-taken:
		assert.Equal(t, "the job", string(j.Data()))
	case err := <-pulled:
		t.Fatalf("the pull ended (%v) before its job was taken", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the job was not taken while the pull was open")
	}
	close(endPull)
	require.NoError(t, <-pulled)
	assert.Empty(t, taken, "one job, taken once")
}

// TestTheAckCheckWritesOnlyUnderAJobsReplySubject: a job's fields are its
// coordinator's to choose, and the agent publishes the stand-in of an
// unanswered acknowledgement with the engine's rights: only under a
// reply subject of a Drawer's form (ackcheck.go), never a JetStream API
// or bucket subject a job names.
func TestTheAckCheckWritesOnlyUnderAJobsReplySubject(t *testing.T) {
	tok := replyToken("d1")
	for s, want := range map[string]bool{
		repliesSubject + tok + ".j1":                 true,
		repliesSubject + tok + ".j1.more":            false,
		repliesSubject + tok + ".*":                  false,
		repliesSubject + tok + ".>":                  false,
		repliesSubject + tok + ".":                   false,
		repliesSubject + tok:                         false,
		repliesSubject + "NOTATOKEN.j1":              false,
		"$JS.API.STREAM.DELETE." + JournalsStream:    false,
		"$KV." + LeaseBucket + ".k":                  false,
		repliesSubject + strings.ToUpper(tok) + ".j": false,
	} {
		assert.Equal(t, want, isJobReplyTo(s), s)
	}
}

// TestTheAgentTakesOnlyJobsOfADrawersForm (review18, medium): the agent
// copies a job's id and lease into the stand-in and the notice it stores
// with the engine's rights, so it delivers (and checks) only jobs whose
// id and lease are of the forms a Drawer writes: a coordinator's lease
// of 250 KiB had each honest worker's terminations store twice that a
// job in the reply stream, which fills for every run.
func TestTheAgentTakesOnlyJobsOfADrawersForm(t *testing.T) {
	tok := replyToken("d1")
	job := func(id, lease string) []byte {
		b, _ := json.Marshal(actedJob{ID: id, ReplyTo: repliesSubject + tok + "." + id, Lease: lease})
		return b
	}
	for name, c := range map[string]struct {
		data []byte
		want bool
	}{
		"a Drawer's":          {job(nuid.Next(), leaseKey()), true},
		"a lease of 250 KiB":  {job(nuid.Next(), strings.Repeat("a", 250<<10)), false},
		"a short lease":       {job(nuid.Next(), "abc"), false},
		"an upper-case lease": {job(nuid.Next(), strings.ToUpper(leaseKey())), false},
		"an id of 250 KiB":    {job(strings.Repeat("A", 250<<10), leaseKey()), false},
		"an id with a dot":    {job("a.b", leaseKey()), false},
		"no id":               {job("", leaseKey()), false},
		"not a job":           {[]byte(`{`), false},
	} {
		_, ok := actedOn(c.data)
		assert.Equal(t, c.want, ok, name)
		assert.Equal(t, c.want, drawerWrites(c.data), name)
	}
}

// TestADeliveryIsSupersededByALaterOneOnly: a redelivery supersedes the
// earlier delivery of the job (an act on it reaches the book only), and
// another agent's news of a delivery supersedes only an earlier one of
// this agent's: news late behind this agent's own newer delivery leaves
// that delivery its worker's (review20).
func TestADeliveryIsSupersededByALaterOneOnly(t *testing.T) {
	d := deliveries{held: map[string]*held{}}
	d.deliver("a", &held{seq: 5, n: 1})
	d.deliver("b", &held{seq: 5, n: 2})
	assert.True(t, d.held["a"].superseded, "the first delivery, after the second")
	assert.False(t, d.held["b"].superseded)
	d.deliver("c", &held{seq: 5, n: 3})
	d.supersede(5, 2) // another agent's news of delivery 2, late
	assert.False(t, d.held["c"].superseded, "news of an earlier delivery")
	d.supersede(5, 4)
	assert.True(t, d.held["c"].superseded, "news of a later delivery")
	d.deliver("x", &held{seq: 6, n: 1})
	d.supersede(7, 9)
	assert.False(t, d.held["x"].superseded, "news of another job")
}
