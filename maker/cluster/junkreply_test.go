package cluster_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// sitterHook is what the sitter does beside its act on a job: with its
// JetStream, its key, the job (its id, reply_to and lease) and the
// message id its reply to the job would be stored under (the lease, "~"
// and its delivery's handle: replyMsgID).
type sitterHook func(js jetstream.JetStream, key string, job cluster.Job, msgID string) error

// sitter is review14's sitter: a worker credential beside an honest
// worker of 4 places. For each job it is sent, in place of an answer, it
// calls before (if set), then sends op on the job ("ack", "nak" or
// "term"; "" sends none: it keeps the job until its ack wait passes),
// then calls after (if set) in a goroutine of its own.
type sitter struct {
	op            string
	delay         time.Duration // a "nak"'s redelivery delay
	skip          time.Duration // its pulls skip the other run's jobs for this long (0: none)
	before, after sitterHook
	quarantined   bool          // the sitter must be quarantined at its first such job
	harmless      bool          // the sitter's jobs must cost the other run nothing: none fails
	bystander     bool          // the other run's coordinator keeps a second Drawer open beside its run's
	timeout       time.Duration // the other run's calls' timeout; 0: 15 s
	ackWait       time.Duration // the engine's ack wait; 0: its default
	model         llms.Model    // the honest worker's; nil: the simulated model
	logs          *lockedBuffer // the other run's Drawer's warnings, kept; nil: a buffer of its own
	agents        int           // the agents serving the engine; 0: one
}

// beside runs the sitter beside the honest worker and another run (a
// 3-disk Hanoi), which must end with none of its calls waiting out their
// timeout, with an undisturbed run's winners or failing at once naming
// the sitter: whatever the sitter did to a job fails its samples at once
// at their Drawer (DrawerStats.Bad), naming the sitter, and no failure
// there names the honest worker. With harmless, no sample fails, and the
// run has an undisturbed run's winners.
//
// With quarantined, the sitter must be quarantined by the other run's
// Drawer at its first such job (Quarantined, with a Reason), and the run
// have an undisturbed run's winners. It returns how many jobs the sitter
// was sent, how many of its acts the agent refused as unanswered, and
// whom the other run's Drawer quarantined.
func (s sitter) beside(t *testing.T) (sent, refused int64, out []cluster.Quarantined) {
	op, before, quarantined, bystander, timeout := s.op, s.before, s.quarantined, s.bystander, cmp.Or(s.timeout, 15*time.Second)
	t.Helper()
	model := s.model
	if model == nil {
		model = simModel(t, 5)
	}
	a := newRouteAttackWith(t, cluster.ProvisionConfig{AckWait: s.ackWait}, model, cluster.WorkerConfig{Inflight: 4}, "sitter")
	for range s.agents - 1 {
		anc, _ := connectAs(t, a.url, cluster.SeedFile(a.dir, cluster.RoleAdmin))
		actx, acancel := context.WithCancel(context.Background())
		t.Cleanup(acancel)
		more, err := cluster.ServeAgent(actx, anc, cluster.ProvisionConfig{AckWait: s.ackWait})
		require.NoError(t, err)
		t.Cleanup(more.Stop)
	}
	snc, sjs := connectAs(t, a.url, a.rogues["sitter"])
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	id := strings.TrimPrefix(snc.Opts.InboxPrefix, "_INBOX_")
	key := identityOf(snc)
	vnc, vjs := connectAs(t, a.url, a.seeds.victim)
	pull := map[string]any{"route": a.worker.Route(), "n": 256, "wait": 30 * time.Second}
	if s.skip > 0 {
		pull["skip"] = map[string]time.Duration{identityOf(vnc): s.skip}
	}
	req, _ := json.Marshal(pull)
	var sentN, refusedN, accepted, beforeFailed atomic.Int64
	answers := snc.NewInbox()
	_, err := snc.Subscribe(answers, func(m *nats.Msg) {
		switch {
		case strings.Contains(string(m.Data), "no reply of this worker"):
			refusedN.Add(1)
		case !strings.Contains(string(m.Data), "error"):
			accepted.Add(1)
		}
	})
	require.NoError(t, err)
	jobs := make(chan *nats.Msg, 4096)
	inbox := snc.NewInbox()
	_, err = snc.Subscribe(inbox, func(m *nats.Msg) {
		if m.Header.Get("Mdap-Handle") != "" {
			sentN.Add(1)
			jobs <- m
		}
	})
	require.NoError(t, err)
	wg.Go(func() { // the sitter's "answers", off the subscription's goroutine
		for {
			select {
			case <-ctx.Done():
				return
			case m := <-jobs:
				var job cluster.Job
				_ = json.Unmarshal(m.Data, &job)
				msgID := job.Lease + "~" + m.Header.Get("Mdap-Handle")
				if before != nil {
					if err := before(sjs, key, job, msgID); err != nil {
						beforeFailed.Add(1)
						t.Logf("sitter's publication: %v", err)
					}
				}
				if op != "" {
					act, _ := json.Marshal(map[string]any{"handle": m.Header.Get("Mdap-Handle"), "op": op, "delay": s.delay})
					_ = snc.PublishRequest("mdap.engine.work."+id+".ack", answers, act)
				}
				if s.after != nil {
					wg.Go(func() {
						if err := s.after(sjs, key, job, msgID); err != nil && ctx.Err() == nil {
							beforeFailed.Add(1)
							t.Logf("sitter's publication: %v", err)
						}
					})
				}
			}
		}
	})
	wg.Go(func() { keepPulling(ctx, snc, "mdap.engine.work."+id+".pull", inbox, req) })
	time.Sleep(500 * time.Millisecond)
	if bystander {
		newDrawer(t, vjs, cluster.DrawerConfig{Timeout: timeout})
	}
	logs := s.logs
	if logs == nil {
		logs = &lockedBuffer{}
	}
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: timeout, Logger: warnLogger(logs)})
	remote, err := d.Model(a.worker.Route())
	require.NoError(t, err)
	start := time.Now()
	rctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	got, err := solveHanoiIn(rctx, remote, 3, a.cfg)
	took := time.Since(start)
	t.Logf("%s, op %q: the other run took %s (err %v) beside the sitter; it was sent %d jobs, %d of its acts accepted, %d refused as unanswered, %d of its own publications failed; drawer %+v; honest worker %+v",
		t.Name(), op, took.Round(time.Millisecond), err, sentN.Load(), accepted.Load(), refusedN.Load(), beforeFailed.Load(), d.Stats(), a.worker.Stats())
	if quarantined {
		require.NoError(t, err)
		q := d.Quarantined()
		if assert.Len(t, q, 1) {
			assert.Equal(t, key, q[0].Identity)
			assert.NotEmpty(t, q[0].Reason)
		}
		assert.LessOrEqual(t, sentN.Load(), int64(4), "the sitter's jobs: those it was sent before its first one failed")
	}
	honest := identityOf(a.wnc)
	assert.Less(t, took, timeout, "no call waited out its timeout")
	assert.NotContains(t, logs.String(), honest, "no sample's failure names the honest worker")
	if s.harmless {
		require.NoError(t, err)
		assert.Equal(t, winners(a.wantSteps), winners(got))
		assert.Zero(t, d.Stats().Bad, "no sample failed")
		return sentN.Load(), refusedN.Load(), d.Quarantined()
	}
	if err != nil {
		// Its room whole, the sitter may take more of a step's samples
		// than the vote's error budget: the run fails at once, naming it.
		assert.ErrorContains(t, err, key, "a failed run names the sitter")
	} else {
		assert.Equal(t, winners(a.wantSteps), winners(got))
	}
	assert.Positive(t, d.Stats().Bad, "the sitter's jobs failed at their Drawer")
	assert.Contains(t, logs.String(), key, "the failures name the sitter")
	return sentN.Load(), refusedN.Load(), d.Quarantined()
}

// TestAWorkerAcknowledgingJobsItNeverAnswersLosesItsRoom: a worker
// credential acknowledges every job it is sent at once, with no reply.
// The agent checks each acknowledgement against what is stored under the
// job's reply id (ackcheck.go): nothing is, so it stores a stand-in that
// fails the job's samples at once at their Drawer (which quarantines the
// worker), terminates the job and strikes the worker's room. The other
// run has an undisturbed run's winners with none of its calls waiting out
// their timeout. Before, each acknowledgement counted as an answer: the
// worker kept its whole room, each sample it took waited out the
// timeout, and the other run had not ended after 2 minutes.
func TestAWorkerAcknowledgingJobsItNeverAnswersLosesItsRoom(t *testing.T) {
	t.Parallel()
	sent, refused, _ := sitter{op: "ack", quarantined: true}.beside(t)
	assert.Equal(t, sent, refused, "each of its acknowledgements refused")
}

// TestJunkUnderAJobsReplyIdFailsItAtOnce (review14, high): a worker
// holding a job stores something other than the job's reply under the
// job's reply id (its lease: the message id only a holder of the job
// knows) before acknowledging the job or handing it back: an empty body,
// a body naming the job with another lease, either on the reply subject
// of another job of the same Drawer (the stream stores every reply of a
// worker to a Drawer under one subject). JetStream then drops the job's
// reply, and the agent's stand-in, as duplicates of it, so the job's
// Drawer fails its calls at once on it and quarantines the sitter (no
// honest worker stores anything else under a reply id), so the run has
// an undisturbed run's winners; before, the Drawer dropped it and each
// such sample waited out its timeout (and a hand-back silenced the honest
// worker that took the job next). Such a sitter's acknowledgements pass
// the agent's check, so it keeps its room on the engine: each other
// coordinator loses one sample to it before quarantining it.
func TestJunkUnderAJobsReplyIdFailsItAtOnce(t *testing.T) {
	t.Parallel()
	publish := func(subject func(job cluster.Job, key string) string, body func(job cluster.Job) []byte) sitterHook {
		return func(js jetstream.JetStream, key string, job cluster.Job, msgID string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := js.Publish(ctx, subject(job, key), body(job), jetstream.WithMsgID(msgID))
			return err
		}
	}
	own := func(job cluster.Job, key string) string { return job.ReplyTo + "." + key }
	another := func(job cluster.Job, key string) string {
		tok := strings.SplitN(strings.TrimPrefix(job.ReplyTo, "mdap.replies."), ".", 2)[0]
		return "mdap.replies." + tok + ".x." + key
	}
	empty := func(cluster.Job) []byte { return []byte(`{}`) }
	forged := func(job cluster.Job) []byte {
		b, _ := json.Marshal(map[string]any{"id": job.ID, "lease": "not-" + job.Lease})
		return b
	}
	for name, c := range map[string]struct {
		op     string
		before sitterHook
	}{
		"an empty body, then an ack":                   {"ack", publish(own, empty)},
		"another lease, then an ack":                   {"ack", publish(own, forged)},
		"an empty body on another job's subject, ack":  {"ack", publish(another, empty)},
		"an empty body, then a hand-back in good time": {"nak", publish(own, empty)},
	} {
		t.Run(name, func(t *testing.T) { // one at a time: each a run beside its sitter
			sitter{op: c.op, before: c.before, quarantined: true}.beside(t)
		})
	}
}

// TestTerminatingJobsUnansweredCostsNoTimeout (review14, high): a worker
// terminating every job it is sent at once, unanswered: the agent stores
// the stand-in for each (a job terminated is never delivered again), so
// its Drawer fails its calls at once; before, each waited out its
// timeout. A termination is no strike and no quarantine (an honest
// worker terminates the jobs its coordinator withdrew, and those it
// cannot decode), so the sitter keeps its room: the run may fail on its
// error budget, naming it.
func TestTerminatingJobsUnansweredCostsNoTimeout(t *testing.T) {
	t.Parallel()
	sitter{op: "term"}.beside(t)
}

// TestAForgedStandInNamesItsSender (review15, low): a worker writes the
// agent's stand-in itself on its own reply subject, under its job's
// lease, naming another worker: the samples' failure and the quarantine
// record name the identity its permissions bind to that subject, not the
// name in the body.
func TestAForgedStandInNamesItsSender(t *testing.T) {
	t.Parallel()
	_, _, out := sitter{op: "nak", quarantined: true, before: func(js jetstream.JetStream, key string, job cluster.Job, msgID string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		body, _ := json.Marshal(map[string]any{"id": job.ID, "lease": job.Lease, "worker": "gpu-honest", "unanswered": true, "acked": true})
		_, err := js.Publish(ctx, job.ReplyTo+"."+key, body, jetstream.WithMsgID(msgID))
		return err
	}}.beside(t)
	if assert.Len(t, out, 1) {
		assert.NotEqual(t, "gpu-honest", out[0].Name, "the quarantine names the sender by its identity")
	}
}

// storeElsewhere stores "{}" under msgID, the sitter's own reply's
// message id for the job, on another live Drawer's subject, its token
// read from the reply stream's subjects.
func storeElsewhere(js jetstream.JetStream, key string, job cluster.Job, msgID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	own := strings.SplitN(strings.TrimPrefix(job.ReplyTo, "mdap.replies."), ".", 2)[0]
	st, err := js.Stream(ctx, cluster.RepliesStream)
	if err != nil {
		return err
	}
	other := ""
	for _, s := range st.CachedInfo().Config.Subjects {
		tok, _, _ := strings.Cut(strings.TrimPrefix(s, "mdap.replies."), ".")
		if strings.HasPrefix(s, "mdap.replies.") && len(tok) == 32 && tok != own {
			other = tok
		}
	}
	if other == "" {
		return errors.New("no other Drawer's subject")
	}
	_, err = js.Publish(ctx, "mdap.replies."+other+".x."+key, []byte(`{}`), jetstream.WithMsgID(msgID))
	return err
}

// TestJunkUnderAJobsReplyIdOnAnotherDrawersSubjectCostsNoTimeout
// (review15, high): the stream's duplicate table is the stream's, not a
// Drawer's: a worker holding a job stores "{}" under the job's lease on
// another live Drawer's subject (storeElsewhere), then acknowledges the
// job: the job's own Drawer never sees that message, and the agent's
// check passes; but the engine's notice of the act (ackcheck.go, on a
// subject no worker may write) reaches the job's Drawer after any reply
// stored before the act, and fails the job at once, naming the sitter.
// Before, each such sample waited out its timeout (45 s, no end). Or it
// hands the job back, or keeps it until its ack wait (2 s here) passes:
// under engine protocol 2 a reply's message id was the lease alone, so
// the honest next holder's reply was dropped as a duplicate (45 s, no
// end, before the notice; then the job failed naming the honest worker:
// CI on 1040766); now its message id holds its own delivery's handle
// (replyMsgID) and no sample fails. Nobody is quarantined.
func TestJunkUnderAJobsReplyIdOnAnotherDrawersSubjectCostsNoTimeout(t *testing.T) {
	t.Parallel()
	// The lease alone: the message id the next holder's reply was
	// stored under in protocol 2.
	leaseAlone := func(js jetstream.JetStream, key string, job cluster.Job, _ string) error {
		return storeElsewhere(js, key, job, job.Lease)
	}
	for name, s := range map[string]sitter{
		"ack":  {op: "ack", before: storeElsewhere},
		"nak":  {op: "nak", before: leaseAlone, harmless: true},
		"keep": {ackWait: 2 * time.Second, before: leaseAlone, harmless: true},
	} {
		t.Run(name, func(t *testing.T) {
			s.bystander = true
			_, _, out := s.beside(t)
			assert.Empty(t, out, "nobody is quarantined")
		})
	}
}

// TestJunkAfterAHandBackNamesNoHonestWorker (review16, high): the sitter
// hands each job back first, then stores "{}" under the job's lease on
// another Drawer's subject while the honest worker calls its model for
// the job (400 ms), so that a check of the reply id at the hand-back
// would find nothing. With a reply's message id the lease alone
// (protocol 2), the honest worker's reply was dropped as a duplicate and
// the job failed naming it (6 of 6 such jobs, review16). Its message id
// holds its own delivery's handle: the junk takes nothing from it. (A
// hand-back with a delay is the open hole docs/nats.md names: each delays
// the job for every worker.)
func TestJunkAfterAHandBackNamesNoHonestWorker(t *testing.T) {
	t.Parallel()
	c := sim.DefaultConfig()
	c.Seed, c.P, c.FlagRate, c.ErrorRate, c.Latency = 5, 0.85, 0.05, 0.01, sim.FixedLatency(400*time.Millisecond)
	slow, err := sim.New(hanoi.Oracle{}, c)
	require.NoError(t, err)
	later := func(js jetstream.JetStream, key string, job cluster.Job, msgID string) error {
		time.Sleep(150 * time.Millisecond)
		// The lease alone: the reply id the honest worker's reply was
		// stored under before protocol 3.
		return storeElsewhere(js, key, job, job.Lease)
	}
	sitter{op: "nak", after: later, bystander: true, harmless: true, model: slow}.beside(t)
}

// TestTerminatingWithAFullPlaceAtTheDrawerCostsNoTimeout (review15,
// medium): a worker keeps its own place at the other run's Drawer
// (ReplyKeep messages on its reply subject) full of "{}" the Drawer drops,
// and terminates each job it is sent: the agent's stand-in finds no room,
// but the notice of the termination is on a subject the worker cannot
// fill, and fails the job at once. Before, each such sample waited out its
// timeout (45 s, no end, at a 5 s timeout).
func TestTerminatingWithAFullPlaceAtTheDrawerCostsNoTimeout(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var once sync.Once
	fill := func(js jetstream.JetStream, key string, job cluster.Job, _ string) error {
		once.Do(func() {
			wg.Go(func() { // the sitter's flood of its own place, until the test ends
				for ctx.Err() == nil {
					pctx, cancel := context.WithTimeout(ctx, time.Second)
					if _, err := js.Publish(pctx, job.ReplyTo+"."+key, []byte(`{}`)); err != nil {
						_ = wait.Sleep(ctx, time.Millisecond)
					}
					cancel()
				}
			})
			time.Sleep(200 * time.Millisecond)
		})
		return nil
	}
	// A long timeout: the flood slows the Drawer (it reads and drops
	// every "{}"), and the run may take longer than a short one.
	sitter{op: "term", before: fill, timeout: 40 * time.Second}.beside(t)
}

// TestANoticeIdTakenBeforeTheActCostsNoTimeout (review17, high): the
// engine's notice of an act was stored under the message id
// "acted."+handle, which the worker holding the job knows: it stored "{}"
// under that id and under its reply's on another Drawer's subject, then
// acknowledged; the check found its reply id taken, the notice was
// dropped as a duplicate, and the job's samples waited out their timeout
// (the other run at its 35 s deadline at 5 s calls). The notice has no
// message id now (notify): the job fails at once, naming the sitter.
func TestANoticeIdTakenBeforeTheActCostsNoTimeout(t *testing.T) {
	t.Parallel()
	takeNotice := func(js jetstream.JetStream, key string, job cluster.Job, msgID string) error {
		_, handle, _ := strings.Cut(msgID, "~")
		if err := storeElsewhere(js, key, job, "acted."+handle); err != nil {
			return err
		}
		return storeElsewhere(js, key, job, msgID)
	}
	_, _, out := sitter{op: "ack", before: takeNotice, bystander: true}.beside(t)
	assert.Empty(t, out, "nobody is quarantined: something was stored under its reply's id")
}

// TestAFailureNamesItsSendersIdentity (review17, medium): a worker
// holding a job stores, under its own reply's id on its own reply
// subject, a body that does not decode as a reply but names the job, its
// lease and, as its worker, another identity (review17 read the honest
// worker's key from the reply stream's subjects, which a worker's
// STREAM.INFO shows), then hands the job back. The job's samples failed
// at once naming that identity: the Drawer read the name from the body.
// It names the identity the sender's permissions bind to the subject now.
func TestAFailureNamesItsSendersIdentity(t *testing.T) {
	t.Parallel()
	const framed = "UFRAMEDFRAMEDFRAMEDFRAMEDFRAMEDFRAMEDFRAMEDFRAMEDFRAMEDFRA"
	blame := func(js jetstream.JetStream, key string, job cluster.Job, msgID string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		body, _ := json.Marshal(map[string]any{"id": job.ID, "lease": job.Lease, "worker": framed})
		_, err := js.Publish(ctx, job.ReplyTo+"."+key, body, jetstream.WithMsgID(msgID))
		return err
	}
	var logs lockedBuffer
	sitter{op: "nak", before: blame, logs: &logs}.beside(t)
	assert.NotContains(t, logs.String(), framed, "a failure names the identity in the body")
}

// TestAForgedCancelNamesNoHonestWorker (review18, high): NATS checks no
// one's right to a reply subject, so a worker credential can have
// JetStream answer a stream info request on a job's cancel subject
// (mdap.cancel.<route token>.<job id>), then hand the job back. The
// honest worker took the answer for a withdrawal, terminated the job
// when it came, and the job's samples failed at once naming the honest
// worker (5 of 5). Through the agent, a notice is now a hint: the worker
// asks the agent, which the coordinator tells of each withdrawal first,
// and calls the job when it was none.
func TestAForgedCancelNamesNoHonestWorker(t *testing.T) {
	t.Parallel()
	forge := func(js jetstream.JetStream, _ string, job cluster.Job, _ string) error {
		err := js.Conn().PublishRequest("$JS.API.STREAM.INFO."+cluster.JobsStream, "mdap.cancel."+cluster.RouteToken(job.Route)+"."+job.ID, nil)
		time.Sleep(50 * time.Millisecond) // the notice reaches the honest worker before the job does
		return err
	}
	sitter{op: "nak", before: forge, harmless: true}.beside(t)
}
