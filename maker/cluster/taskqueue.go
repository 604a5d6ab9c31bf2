package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultTaskAckWait is how long a claimed task may go without word from
// its coordinator before it is redelivered to another, when
// TaskQueueConfig.AckWait is zero. A live coordinator reports progress
// every third of it, however long the task takes.
const DefaultTaskAckWait = 30 * time.Second

// TaskQueueConfig configures a TaskQueue.
type TaskQueueConfig struct {
	// AckWait is the queue consumer's ack wait (the last coordinator to
	// open the queue sets it); 0 means DefaultTaskAckWait, at least 1s.
	AckWait time.Duration
	// Replicas is the replica count of the shared streams (TasksStream,
	// ResultsBucket) when this client creates them: on a server without
	// roles that nobody provisions. 0 means 1. With roles the engine's
	// replicas apply (ProvisionConfig.Replicas).
	Replicas int
	// MaxAge is the retention of the tasks published and the results
	// recorded through this queue: each is removed that long after it
	// was written (a per-message TTL); 0 means DefaultRetention, at most
	// MaxRetention. The queue's consumer goes after
	// DefaultConsumerInactive without a coordinator.
	MaxAge time.Duration
}

// TaskQueue spreads the tasks of a batch over several coordinators: the
// subjects mdap.queues.<queue>.<task> of the shared work-queue stream
// TasksStream (one message per task), one durable consumer q_<queue>
// shared by every coordinator of the queue, and the keys <queue>.<task>
// of the shared bucket ResultsBucket, one result per task; a run key's
// queue is on a stream and a bucket of its own, bounded by its budget
// (RunQueueStream, subjects mdap.run.<run>.tasks.<task>, and
// RunResultsBucket), where a full one refuses its writes with
// ErrBudgetFull.
//
// A coordinator Takes a task (a Claim), solves it and Completes it:
// Complete writes the result with a create-only put (the first result of
// a task stands, ErrAlreadyCompleted for any other) and then acknowledges
// the task. So each task gets exactly one result however coordinators
// die: a claim whose coordinator dies is redelivered after AckWait, and
// the next coordinator resumes it from its journal on the engine; a task
// redelivered after its result was written is acknowledged by Take and
// never handed out again.
//
// What happens when a part dies: a coordinator: its claim is redelivered
// after AckWait (the other coordinators carry on); the server: Take and
// Complete fail with ErrEngine until it is back, and the tasks and
// results on its store survive (on a cluster, on every replica). Safe for
// concurrent use.
type TaskQueue struct {
	js      jetstream.JetStream
	name    string
	cons    jetstream.Consumer
	results jetstream.KeyValue
	ackWait time.Duration
	maxAge  time.Duration
	// own: the queue is its run key's (RunQueueStream,
	// RunResultsBucket); stream, subject (its tasks' prefix) and bucket
	// are where it is.
	own                     bool
	stream, subject, bucket string
}

// taskConsumerConfig is the consumer of queue's coordinators, taking the
// tasks under subject (the queue's prefix on its stream).
func taskConsumerConfig(queue, subject string, ackWait time.Duration) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:           taskConsumerOf(queue),
		Description:       "mdap coordinators of queue " + queue,
		FilterSubject:     subject + ">",
		AckPolicy:         jetstream.AckExplicitPolicy,
		AckWait:           ackWait,
		MaxAckPending:     -1,
		InactiveThreshold: DefaultConsumerInactive,
	}
}

// OpenTaskQueue creates the queue named name (letters, digits, '-', '_')
// if it does not exist, or opens it: its consumer is made by the engine
// (or, on a server without roles, by this client). Errors wrap ErrConfig,
// ErrAuth (a run coordinator's key of another run, or the shared
// coordinator's credential for a run key's queue: at once, not at a
// timeout), ErrOldLayout (a queue an earlier mdap started on streams of
// its own, MDAP_TASKS_<queue>, or a run key's queue left on TasksStream
// or ResultsBucket before it had its own), ErrNotProvisioned or
// ErrEngine. A run key's queue is made by the engine's agent
// (mdap.engine.runtasks.<run>), with its stream and bucket. An engine that does
// not answer for a while (a cluster electing leaders after a node's
// restart, a connection moving to another node) is asked again for about
// 30 s within ctx.
func OpenTaskQueue(ctx context.Context, js jetstream.JetStream, name string, cfg TaskQueueConfig) (*TaskQueue, error) {
	return retryPassing(ctx, setupAttempt, func(ctx context.Context) (*TaskQueue, error) {
		return openTaskQueueOnce(ctx, js, name, cfg)
	})
}

func openTaskQueueOnce(ctx context.Context, js jetstream.JetStream, name string, cfg TaskQueueConfig) (*TaskQueue, error) {
	if err := checkName("queue", name); err != nil {
		return nil, err
	}
	if cfg.AckWait < 0 || (cfg.AckWait > 0 && cfg.AckWait < time.Second) {
		return nil, fmt.Errorf("%w: task AckWait %s: use at least 1s", ErrConfig, cfg.AckWait)
	}
	if cfg.MaxAge < 0 || cfg.MaxAge > MaxRetention {
		return nil, fmt.Errorf("%w: queue MaxAge %s: use 0 (the default) or a positive duration up to %s", ErrConfig, cfg.MaxAge, MaxRetention)
	}
	if legacyStreamExists(ctx, js, TaskStreamPrefix+name) {
		return nil, oldLayoutErr("the task queue", name, TaskStreamPrefix+name)
	}
	maxAge := cmpOr(cfg.MaxAge, DefaultRetention)
	q := &TaskQueue{js: js, name: name, ackWait: cmpOr(cfg.AckWait, DefaultTaskAckWait), maxAge: maxAge,
		stream: TasksStream, subject: tasksSubject + name + ".", bucket: ResultsBucket}
	req := agentRequest{Name: name, MaxAge: maxAge, AckWait: q.ackWait}
	// A run key's queue is its own, made by the engine's agent at its
	// request (mdap.engine.runtasks.<run>, which only that key's
	// permissions name); the shared coordinator is refused it and keeps
	// the shared queue.
	_, err := unlessRefused(ctx, js.Conn(), agentSubject+"runtasks."+name, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, askAgent(ctx, js.Conn(), "runtasks."+name, req)
	})
	switch {
	case err == nil:
		q.own = true
	case errors.Is(err, errNoAgent):
		// One the agent made before serves its key while no agent
		// answers (a stock server's provisioner restarting).
		_, serr := unlessRefused(ctx, js.Conn(), "$JS.API.STREAM.INFO."+RunQueueStream(name), func(ctx context.Context) (jetstream.Stream, error) {
			return js.Stream(ctx, RunQueueStream(name))
		})
		q.own = serr == nil
	case errors.Is(err, ErrAuth):
		// Not this run's key: a shared coordinator may see whether the
		// queue is a run key's.
		if _, serr := unlessRefused(ctx, js.Conn(), "$JS.API.STREAM.INFO."+RunQueueStream(name), func(ctx context.Context) (jetstream.Stream, error) {
			return js.Stream(ctx, RunQueueStream(name))
		}); serr == nil {
			return nil, fmt.Errorf("%w: the task queue %s is on a stream of its own, %s (its run key's budget): open it with its run key (maker nats run add %s issued runs/%s.nk), not with this credential", ErrAuth, name, RunQueueStream(name), name, name)
		}
	default:
		return nil, err
	}
	if q.own {
		q.stream, q.subject, q.bucket = RunQueueStream(name), runTasksSubject(name), RunResultsBucket(name)
		if err := sharedQueueLeft(ctx, js, name); err != nil {
			return nil, err
		}
		q.cons, err = js.Consumer(ctx, q.stream, taskConsumerOf(name))
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("%w: the consumer of the task queue %s is missing and no engine agent answers to make it: run maker nats, or maker nats provision with the admin credential: %w", ErrNotProvisioned, name, err)
		}
	} else {
		if _, err := runStream(ctx, js, TasksStream, cfg.Replicas); err != nil {
			return nil, err
		}
		_, err = unlessRefused(ctx, js.Conn(), agentSubject+"tasks."+name, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, askAgent(ctx, js.Conn(), "tasks."+name, req)
		})
		switch {
		case errors.Is(err, ErrAuth):
			return nil, fmt.Errorf("%w (a run coordinator's key serves its own run's queue only: maker nats run add %s issues one for this queue)", err, name)
		case err == nil: // made by the engine (a server with roles)
			q.cons, err = js.Consumer(ctx, TasksStream, taskConsumerOf(name))
		case errors.Is(err, errNoAgent):
			q.cons, err = js.CreateOrUpdateConsumer(ctx, TasksStream, taskConsumerConfig(name, q.subject, q.ackWait))
		default:
			return nil, err
		}
	}
	if err == nil {
		q.results, err = js.KeyValue(ctx, q.bucket)
	}
	if err != nil {
		if errors.Is(err, ErrNotProvisioned) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: task queue %s: %w", ErrEngine, name, err)
	}
	if aw := q.cons.CachedInfo().Config.AckWait; aw > 0 {
		q.ackWait = aw
	}
	return q, nil
}

// Publish adds a task with its id (a name: letters, digits, '-', '_') and
// data (opaque to the queue: a job line, say), on its own subject
// mdap.queues.<queue>.<id>. Publishing an id that is still queued (or
// claimed) is a no-op: the subject holds one message and the stream
// refuses a second; a task published again after its result was recorded
// is skipped by Take. Errors wrap ErrConfig or ErrEngine (ErrBudgetFull
// for a run key's full task stream).
func (q *TaskQueue) Publish(ctx context.Context, id string, data []byte) error {
	if err := checkName("task", id); err != nil {
		return err
	}
	_, err := q.js.Publish(ctx, q.subject+id, data, jetstream.WithExpectStream(q.stream), jetstream.WithMsgTTL(q.maxAge))
	if err != nil && strings.Contains(err.Error(), "maximum messages per subject exceeded") {
		return nil // queued already
	}
	if err != nil {
		return q.fullErr(err, fmt.Sprintf("publish task %s of queue %s on stream %s", id, q.name, q.stream), "the task stream "+q.stream)
	}
	return nil
}

// fullErr wraps err, a refused write of what into thing: ErrBudgetFull
// naming the run key's budget on a queue of its own that is full,
// ErrEngine otherwise.
func (q *TaskQueue) fullErr(err error, what, thing string) error {
	if q.own {
		return budgetErr(err, what, q.name, thing)
	}
	return fmt.Errorf("%w: %s: %w%s", ErrEngine, what, err, fullHint(err))
}

// Claim is one coordinator's hold on a task, from Take to Complete or
// Release. While held, progress is reported every third of the ack wait;
// a coordinator that dies stops reporting and the task is redelivered.
type Claim struct {
	// ID and Data are the task's, as published.
	ID   string
	Data []byte
	// Attempt is 1 for a first delivery, more for a task whose earlier
	// coordinator died or released it: its journal may hold its start.
	Attempt int

	q    *TaskQueue
	msg  jetstream.Msg
	stop func()
	once sync.Once
}

// Take waits for a task and claims it. A task that already has a result
// is acknowledged and skipped. Errors: ctx.Err() when ctx ends; ErrEngine
// (retried for as long as ctx lasts when transient).
func (q *TaskQueue) Take(ctx context.Context) (*Claim, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The pull's wait ends with ctx too, so that a Serve whose queue
		// is drained stops its idle places at once.
		fctx, cancel := context.WithTimeout(ctx, pollWait)
		batch, err := q.cons.Fetch(1, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
				// FetchContext refuses a context at its deadline before
				// the context itself says so.
				return nil, context.DeadlineExceeded
			}
			if isTransient(err) {
				_ = wait.Sleep(ctx, backoff)
				continue
			}
			return nil, fmt.Errorf("%w: take a task of %s: %w", ErrEngine, q.name, err)
		}
		for msg := range batch.Messages() {
			id, ok := strings.CutPrefix(msg.Subject(), q.subject)
			if !ok || checkName("task", id) != nil {
				_ = msg.TermWithReason("not a task of this queue")
				continue
			}
			if _, err := q.results.Get(ctx, q.resultKey(id)); err == nil {
				_ = msg.Ack() // done before: a redelivery after the result
				continue
			}
			attempt := 1
			if md, err := msg.Metadata(); err == nil {
				attempt = int(md.NumDelivered)
			}
			c := &Claim{ID: id, Data: msg.Data(), Attempt: attempt, q: q, msg: msg}
			c.stop = heartbeat(msg, q.ackWait, nil, nil)
			cancel()
			return c, nil
		}
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := batch.Error(); err != nil && !isTransient(err) {
			return nil, fmt.Errorf("%w: take a task of %s: %w", ErrEngine, q.name, err)
		}
	}
}

// heartbeat reports progress on msg every third of ackWait, and at once
// at each receive from check, until the returned stop is called;
// withdrawn, if set, is called when the agent answers that the job's
// coordinator withdrew it.
func heartbeat(msg interface{ InProgress() error }, ackWait time.Duration, check <-chan struct{}, withdrawn func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-check:
				if err := msg.InProgress(); withdrawn != nil && errors.Is(err, errJobWithdrawn) {
					withdrawn()
				}
			case <-t.C:
				if err := msg.InProgress(); withdrawn != nil && errors.Is(err, errJobWithdrawn) {
					withdrawn()
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// Complete records the task's result, if it has none yet, and
// acknowledges the task, which leaves the queue. It returns
// ErrAlreadyCompleted (the task is acknowledged all the same) when another
// coordinator recorded a result first: that one stands. Errors: ErrEngine
// (ErrBudgetFull for a run key's full result bucket; the claim is kept:
// Complete may be called again, or the task is redelivered after the ack
// wait).
func (c *Claim) Complete(ctx context.Context, result []byte) error {
	var err error
	for try := 0; ; try++ {
		_, err = c.q.results.Create(ctx, c.q.resultKey(c.ID), result, jetstream.KeyTTL(c.q.maxAge))
		// No responders: the bucket is electing a leader (a node of a
		// cluster was lost); nothing was stored, so try again a while.
		if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrNoStreamResponse) || try >= int(opTimeout/leaderRetryWait) || ctx.Err() != nil {
			break
		}
		_ = wait.Sleep(ctx, leaderRetryWait)
	}
	switch {
	case errors.Is(err, jetstream.ErrKeyExists):
		c.end()
		_ = c.msg.DoubleAck(ctx)
		return fmt.Errorf("%w: %s", ErrAlreadyCompleted, c.ID)
	case err != nil:
		return c.q.fullErr(err, "record the result of "+c.ID, "the result bucket "+c.q.bucket)
	}
	c.end()
	if err := c.msg.DoubleAck(ctx); err != nil {
		// The result stands; a redelivery finds it and is skipped.
		return fmt.Errorf("%w: acknowledge %s (its result is recorded): %w", ErrEngine, c.ID, err)
	}
	return nil
}

// Release hands the task back unsolved, for another coordinator after
// delay (0: at once); for a task that cannot be solved here now, such as
// one whose journal is still locked by a coordinator that is dying.
func (c *Claim) Release(delay time.Duration) error {
	c.end()
	if err := c.msg.NakWithDelay(delay); err != nil {
		return fmt.Errorf("%w: release %s: %w", ErrEngine, c.ID, err)
	}
	return nil
}

// Abandon stops reporting progress and lets the claim go without a word:
// the task is redelivered after the ack wait, as when a coordinator dies.
// Prefer Release, which hands it back at once.
func (c *Claim) Abandon() { c.end() }

func (c *Claim) end() { c.once.Do(c.stop) }

// Serve solves the queue's tasks, n at a time (0 means 1), until every
// task has a result (no task left in the queue, claimed ones included:
// a coordinator that dies hands its claim to the survivors) or ctx ends.
// solve turns a claim into its result, which Serve records with Complete.
// A solve error releases the claim for another attempt after a second,
// and is passed to failed (if set) with the claim; when ctx ended, the
// claim is released at once. Every goroutine has ended when Serve
// returns. Errors: ctx.Err(); ErrEngine from Take.
func (q *TaskQueue) Serve(ctx context.Context, n int, solve func(ctx context.Context, c *Claim) ([]byte, error), failed func(c *Claim, err error)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// drained ends every place's wait for a task once a completion here
	// leaves the queue empty: no task is left for any of them.
	waiting, drained := context.WithCancel(ctx)
	defer drained()
	var wg sync.WaitGroup
	for range max(n, 1) {
		wg.Go(func() {
			for ctx.Err() == nil {
				takeCtx, stop := context.WithTimeout(waiting, 2*pollWait)
				c, err := q.Take(takeCtx)
				stop()
				if waiting.Err() != nil && ctx.Err() == nil {
					if c != nil {
						_ = c.Release(0)
					}
					return // drained
				}
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
					if pending, perr := q.Pending(ctx); perr == nil && pending == 0 {
						return // drained
					}
					continue
				}
				if err != nil {
					if ctx.Err() == nil {
						cancel(err)
					}
					return
				}
				result, err := solve(ctx, c)
				switch {
				case err == nil:
					if cerr := c.Complete(context.WithoutCancel(ctx), result); cerr != nil && !errors.Is(cerr, ErrAlreadyCompleted) {
						// Not recorded (the engine lost a node, say): the
						// task goes back, and its journal gives its result
						// again at once.
						_ = c.Release(time.Second)
						if failed != nil {
							failed(c, cerr)
						}
					}
					if pending, perr := q.Pending(ctx); perr == nil && pending == 0 {
						drained()
					}
				case ctx.Err() != nil:
					_ = c.Release(0)
				default:
					_ = c.Release(time.Second)
					if failed != nil {
						failed(c, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return ctx.Err()
}

// resultKey is the key of task id's result in its bucket.
func (q *TaskQueue) resultKey(id string) string { return q.name + "." + id }

// Result returns a task's result, and whether it has one.
func (q *TaskQueue) Result(ctx context.Context, id string) ([]byte, bool, error) {
	e, err := q.results.Get(ctx, q.resultKey(id))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("%w: result of %s: %w", ErrEngine, id, err)
	}
	return e.Value(), true, nil
}

// Results returns every result recorded so far, by task id. Which keys
// exist is the bucket leader's word (stream info); a value is read from
// whichever replica answers, and one still catching up (a node restarted)
// answers "not found" for a key the leader has: it is asked again, up to
// 30 s, never taken for a task without a result. Errors wrap ErrEngine.
func (q *TaskQueue) Results(ctx context.Context) (map[string][]byte, error) {
	prefix := "$KV." + q.bucket + "." + q.name + "."
	st, err := q.js.Stream(ctx, "KV_"+q.bucket)
	var info *jetstream.StreamInfo
	if err == nil {
		info, err = st.Info(ctx, jetstream.WithSubjectFilter(prefix+"*"))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: results of %s: %w", ErrEngine, q.name, err)
	}
	out := map[string][]byte{}
	for subject := range info.State.Subjects {
		m, err := lastOf(ctx, st, subject)
		if err != nil {
			return nil, fmt.Errorf("%w: result of %s: %w", ErrEngine, strings.TrimPrefix(subject, prefix), err)
		}
		if op := m.Header.Get("KV-Operation"); op == "DEL" || op == "PURGE" {
			continue
		}
		out[strings.TrimPrefix(subject, prefix)] = m.Data
	}
	return out, nil
}

// lastOf reads subject's last message, asking again while the replica
// that answers has none yet, up to opTimeout.
func lastOf(ctx context.Context, st jetstream.Stream, subject string) (*jetstream.RawStreamMsg, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	for {
		m, err := st.GetLastMsgForSubject(ctx, subject)
		if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return m, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the leader has it, no replica answered it: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Pending returns how many tasks are in the queue, claimed or not: the
// tasks not yet completed, counted in the stream (a completed task is
// removed from it), so a task whose Publish returned is counted at once.
// (The queue's consumer counts a new message a moment after it is
// stored: its count could miss tasks just published.)
func (q *TaskQueue) Pending(ctx context.Context) (int, error) {
	counts, err := subjectCounts(ctx, q.js, q.stream, q.subject+">")
	if err != nil {
		return 0, fmt.Errorf("queue %s: %w", q.name, err)
	}
	n := 0
	for _, c := range counts {
		n += int(c)
	}
	return n, nil
}

// OpenOrCreateJournal opens the journal of run on the engine to resume it
// if it exists, and creates it otherwise. resumed says which. Errors are
// OpenJournal's and CreateJournal's.
func OpenOrCreateJournal(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig) (j *journal.Journal, resumed bool, err error) {
	if err := checkName("run", run); err != nil {
		return nil, false, err
	}
	return openOrCreate(ctx, js, runJournal(run), cfg)
}

// TaskJournal opens the journal of task of queue on the engine to resume
// it if it exists, and creates it otherwise: what a coordinator of a
// TaskQueue does with a claimed task (SolveBatch does). The journal is on
// the subject mdap.journals.<queue>.<task>, its lease the key
// <queue>.<task>, so a coordinator issued for the queue (RunRole(queue))
// may use it; it goes by "nats:QUEUE.TASK". resumed says whether it
// existed. Errors are OpenJournal's and CreateJournal's.
func TaskJournal(ctx context.Context, js jetstream.JetStream, queue, task string, cfg JournalConfig) (j *journal.Journal, resumed bool, err error) {
	if err := checkName("queue", queue); err != nil {
		return nil, false, err
	}
	if err := checkName("task", task); err != nil {
		return nil, false, err
	}
	return openOrCreate(ctx, js, taskJournal(queue, task), cfg)
}

func openOrCreate(ctx context.Context, js jetstream.JetStream, ref journalRef, cfg JournalConfig) (*journal.Journal, bool, error) {
	j, err := openJournal(ctx, js, ref, cfg, false)
	if errors.Is(err, journal.ErrPath) {
		j, err = openJournal(ctx, js, ref, cfg, true)
		return j, false, err
	}
	return j, err == nil, err
}
