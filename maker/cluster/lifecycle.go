package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Retention of what runs leave on the engine.
const (
	// DefaultRetention is how long journal lines, queued tasks and task
	// results are kept when JournalConfig.MaxAge or TaskQueueConfig.MaxAge
	// is zero: thirty days, so an engine does not grow forever. Remove a
	// run's leftovers sooner with RemoveRun (maker nats rm RUN).
	DefaultRetention = 30 * 24 * time.Hour
	// DefaultConsumerInactive is how long a durable consumer (a route's
	// workers, a task queue's coordinators) outlives its last client.
	DefaultConsumerInactive = 24 * time.Hour
)

// Leftover is one thing a run or batch left on the engine, as List
// reports it.
type Leftover struct {
	// Kind is "journal", "tasks" (a task queue, with its results) or
	// "route" (the consumer of a route's workers).
	Kind string `json:"kind"`
	// Name is the run, queue or route token: what RemoveRun takes (a
	// route's consumer goes by itself after DefaultConsumerInactive).
	Name string `json:"name"`
	// Messages and Bytes stored: journal lines, queued tasks (plus
	// Results), jobs waiting for the route. Bytes is known for a stream
	// of one run only (a legacy stream, a run key's journal or task
	// stream: its budget used); a shared stream counts messages per
	// subject, not bytes.
	Messages uint64 `json:"messages"`
	Bytes    uint64 `json:"bytes"`
	// Results is a task queue's result count.
	Results uint64 `json:"results,omitempty"`
	// Created is when it was created; Last when it was last written.
	Created time.Time `json:"created"`
	Last    time.Time `json:"last,omitzero"`
	// Retention is its MaxAge, or the TTL of a journal's last line (0:
	// kept until removed, or not known).
	Retention time.Duration `json:"retention_ns"`
	// Holder is who holds a journal's lease now, if anyone.
	Holder string `json:"holder,omitempty"`
	// Legacy marks a journal or task queue an earlier mdap kept on a
	// stream of its own: it is not resumed (ErrOldLayout); remove it with
	// RemoveRun.
	Legacy bool `json:"legacy,omitempty"`
}

// List returns what runs left on the engine: every journal (by its
// subject of JournalsStream or of its run key's RunStream; a batch's task
// journals as QUEUE.TASK), task queue (its queued tasks and results, on
// the shared streams or its run key's RunQueueStream and
// RunResultsBucket, whose bytes it counts) and route consumer, by kind then
// name, and what an earlier mdap left on streams of its own (Kind
// "journal" or "tasks", Legacy set). It needs the admin identity on a
// server with roles. Errors wrap ErrEngine.
func List(ctx context.Context, js jetstream.JetStream) ([]Leftover, error) {
	var out []Leftover
	// The leases: the shared bucket's, and each run key's (ownLeases).
	buckets := map[string]jetstream.KeyValue{}
	bucket := func(name string) jetstream.KeyValue {
		kv, ok := buckets[name]
		if !ok {
			kv, _ = js.KeyValue(ctx, name)
			buckets[name] = kv
		}
		return kv
	}
	holder := func(key string) string {
		run, _, _ := strings.Cut(key, ".")
		for _, name := range []string{RunLeaseBucket(run), LeaseBucket} {
			if kv := bucket(name); kv != nil {
				if e, err := kv.Get(ctx, key); err == nil {
					return string(e.Value())
				}
			}
		}
		return ""
	}
	streams, err := journalStreams(ctx, js)
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, name := range streams {
		journals, err := subjectCounts(ctx, js, name, ">")
		if err != nil {
			return nil, err
		}
		if len(journals) == 0 {
			continue
		}
		st, err := js.Stream(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("%w: stream %s: %w", ErrEngine, name, err)
		}
		for subj, n := range journals {
			key := journalKeyOf(subj)
			l := Leftover{Kind: "journal", Name: key, Messages: n, Holder: holder(key)}
			if name != JournalsStream && !strings.Contains(key, ".") {
				// A run key's stream counts its bytes: its budget used.
				l.Bytes = st.CachedInfo().State.Bytes
			}
			if m, err := st.GetLastMsgForSubject(ctx, subj); err == nil {
				l.Last = m.Time
				l.Retention, _ = time.ParseDuration(m.Header.Get(jetstream.MsgTTLHeader))
			}
			listed[key] = true
			out = append(out, l)
		}
	}
	// A journal in use with no line yet is its lease alone.
	leaseBuckets := []string{LeaseBucket}
	for _, name := range streams {
		if run, ok := strings.CutPrefix(name, RunStreamPrefix); ok {
			leaseBuckets = append(leaseBuckets, RunLeaseBucket(run))
		}
	}
	for _, name := range leaseBuckets {
		kv := bucket(name)
		if kv == nil {
			continue
		}
		if keys, err := kv.ListKeys(ctx); err == nil {
			for key := range keys.Keys() {
				if !listed[key] {
					listed[key] = true
					out = append(out, Leftover{Kind: "journal", Name: key, Holder: holder(key)})
				}
			}
		}
	}
	tasks, err := subjectCounts(ctx, js, TasksStream, tasksSubject+">")
	if err != nil {
		return nil, err
	}
	results, err := subjectCounts(ctx, js, "KV_"+ResultsBucket, "$KV."+ResultsBucket+".>")
	if err != nil {
		return nil, err
	}
	queues := map[string]*Leftover{}
	queue := func(name string) *Leftover {
		if queues[name] == nil {
			queues[name] = &Leftover{Kind: "tasks", Name: name}
		}
		return queues[name]
	}
	for subj, n := range tasks {
		name, _, _ := strings.Cut(strings.TrimPrefix(subj, tasksSubject), ".")
		queue(name).Messages += n
	}
	for subj := range results {
		name, _, _ := strings.Cut(strings.TrimPrefix(subj, "$KV."+ResultsBucket+"."), ".")
		queue(name).Results++
	}
	for _, l := range queues {
		if c, err := js.Consumer(ctx, TasksStream, taskConsumerOf(l.Name)); err == nil {
			l.Created = c.CachedInfo().Created
		}
	}
	// Run keys' queues, on streams of their own: their bytes are their
	// share of the key's budget used.
	own, err := runQueueStreams(ctx, js)
	if err != nil {
		return nil, err
	}
	for _, run := range own {
		st, err := js.Stream(ctx, RunQueueStream(run))
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: stream %s: %w", ErrEngine, RunQueueStream(run), err)
		}
		l := queue(run)
		info := st.CachedInfo()
		l.Messages += info.State.Msgs
		l.Bytes += info.State.Bytes
		l.Created, l.Retention = info.Created, info.Config.MaxAge
		if !info.State.LastTime.IsZero() {
			l.Last = info.State.LastTime
		}
		if kv := bucket(RunResultsBucket(run)); kv != nil {
			if st, err := kv.Status(ctx); err == nil {
				l.Results += st.Values()
			}
		}
	}
	for _, l := range queues {
		out = append(out, *l)
	}
	legacy, err := legacyLeftovers(ctx, js, holder)
	if err != nil {
		return nil, err
	}
	out = append(out, legacy...)
	if jobs, err := js.Stream(ctx, JobsStream); err == nil {
		cl := jobs.ListConsumers(ctx)
		for ci := range cl.Info() {
			if !strings.HasPrefix(ci.Name, "w-") {
				continue
			}
			l := Leftover{Kind: "route", Name: strings.TrimPrefix(ci.Name, "w-"), Messages: ci.NumPending + uint64(ci.NumAckPending), Created: ci.Created, Retention: ci.Config.InactiveThreshold}
			if ci.Delivered.Last != nil {
				l.Last = *ci.Delivered.Last
			}
			out = append(out, l)
		}
		if err := cl.Err(); err != nil {
			return nil, fmt.Errorf("%w: list the routes: %w", ErrEngine, err)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// journalStreams are the streams that hold journals: JournalsStream and
// every run key's (RunStream).
func journalStreams(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	out := []string{JournalsStream}
	names := js.StreamNames(ctx, jetstream.WithStreamListSubject(runSubject+">"))
	for n := range names.Name() {
		if strings.HasPrefix(n, RunStreamPrefix) {
			out = append(out, n)
		}
	}
	if err := names.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return nil, fmt.Errorf("%w: list the run keys' journal streams: %w", ErrEngine, err)
	}
	return out, nil
}

// runQueueStreams are the runs whose key has a task stream of its own
// (RunQueueStream).
func runQueueStreams(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	var out []string
	names := js.StreamNames(ctx, jetstream.WithStreamListSubject(runSubject+">"))
	for n := range names.Name() {
		if run, ok := strings.CutPrefix(n, RunQueuePrefix); ok {
			out = append(out, run)
		}
	}
	if err := names.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return nil, fmt.Errorf("%w: list the run keys' task streams: %w", ErrEngine, err)
	}
	return out, nil
}

// journalKeyOf is the journal key (a run, or <queue>.<task>) of a
// journal's subject, on JournalsStream or a run key's stream.
func journalKeyOf(subject string) string {
	if key, ok := strings.CutPrefix(subject, journalSubject); ok {
		return key
	}
	run, task, _ := strings.Cut(strings.TrimPrefix(subject, runSubject), ".journal")
	return run + task
}

// subjectCounts returns the messages of each subject of stream matching
// filter; none when the stream does not exist.
func subjectCounts(ctx context.Context, js jetstream.JetStream, stream, filter string) (map[string]uint64, error) {
	st, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: stream %s: %w", ErrEngine, stream, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("%w: stream %s: %w", ErrEngine, stream, err)
	}
	return info.State.Subjects, nil
}

// legacyLeftovers lists the journals and task queues an earlier mdap kept
// on streams of their own.
func legacyLeftovers(ctx context.Context, js jetstream.JetStream, holder func(string) string) ([]Leftover, error) {
	var out []Leftover
	names := js.StreamNames(ctx)
	var streams []string
	for n := range names.Name() {
		streams = append(streams, n)
	}
	if err := names.Err(); err != nil {
		return nil, fmt.Errorf("%w: list streams: %w", ErrEngine, err)
	}
	for _, n := range streams {
		var l Leftover
		switch {
		case strings.HasPrefix(n, JournalStreamPrefix):
			l = Leftover{Kind: "journal", Name: strings.TrimPrefix(n, JournalStreamPrefix), Legacy: true}
			l.Holder = holder(l.Name)
		case strings.HasPrefix(n, TaskStreamPrefix):
			l = Leftover{Kind: "tasks", Name: strings.TrimPrefix(n, TaskStreamPrefix), Legacy: true}
			if kv, err := js.KeyValue(ctx, ResultBucketPrefix+l.Name); err == nil {
				if st, err := kv.Status(ctx); err == nil {
					l.Results = st.Values()
				}
			}
		default:
			continue
		}
		st, err := js.Stream(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("%w: stream %s: %w", ErrEngine, n, err)
		}
		info := st.CachedInfo()
		l.Messages, l.Bytes, l.Created, l.Last, l.Retention = info.State.Msgs, info.State.Bytes, info.Created, info.State.LastTime, info.Config.MaxAge
		out = append(out, l)
	}
	return out, nil
}

// ErrNotFound: RemoveRun found nothing of that name.
var ErrNotFound = errors.New("nothing of that name on the engine")

// RemoveRun removes what the run or batch name left on the engine: the
// journal of run name (taking its lease first, so a run in progress is
// never removed under its coordinator: journal.ErrLocked), and the
// task queue name with its results and the journals of its tasks
// (name.<task>), on the shared streams, on its run key's own streams and
// buckets (RunStream, RunQueueStream, RunResultsBucket; its lease bucket,
// RunLeaseBucket, once no lease is held there) and on the streams of an
// earlier mdap alike. It needs the admin identity on a server with roles. It
// returns what it removed. Errors: ErrConfig (a bad name), ErrNotFound,
// journal.ErrLocked, ErrEngine.
func RemoveRun(ctx context.Context, js jetstream.JetStream, name string) ([]string, error) {
	if err := checkName("run", name); err != nil {
		return nil, err
	}
	var removed []string
	exists := func(stream string) (bool, error) {
		_, err := js.Stream(ctx, stream)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("%w: stream %s: %w", ErrEngine, stream, err)
		}
		return true, nil
	}
	// Lines by journal key, on the shared stream and the run's own.
	journals := map[string]uint64{}
	for _, h := range []home{{JournalsStream, journalSubject + name}, {JournalsStream, journalSubject + name + ".*"},
		{RunStream(name), runJournalSubject(name)}, {RunStream(name), runJournalSubject(name) + ".*"}} {
		counts, err := subjectCounts(ctx, js, h.stream, h.subject)
		if err != nil {
			return nil, err
		}
		for subj, n := range counts {
			journals[journalKeyOf(subj)] += n
		}
	}
	removeJournal := func(ref journalRef) error {
		legacy := false
		if ref.legacy != "" {
			var err error
			if legacy, err = exists(ref.legacy); err != nil {
				return err
			}
		}
		if journals[ref.key] == 0 && !legacy && !leased(ctx, js, ref.key) {
			return nil
		}
		if err := deleteJournal(ctx, js, ref, JournalConfig{}); err != nil {
			return err
		}
		removed = append(removed, "journal "+ref.key)
		return nil
	}
	if err := removeJournal(runJournal(name)); err != nil {
		return removed, err
	}
	// The journals of the queue's tasks first: a task in progress keeps
	// its queue.
	var refs []journalRef
	for key := range journals {
		if task, ok := strings.CutPrefix(key, name+"."); ok {
			refs = append(refs, taskJournal(name, task))
		}
	}
	legacyQueue, err := exists(TaskStreamPrefix + name)
	if err != nil {
		return removed, err
	}
	if legacyQueue {
		names := js.StreamNames(ctx)
		for n := range names.Name() {
			if task, ok := strings.CutPrefix(n, JournalStreamPrefix+name+"_"); ok {
				refs = append(refs, journalRef{key: name + "_" + task, legacy: n})
			}
		}
		if err := names.Err(); err != nil {
			return removed, fmt.Errorf("%w: list streams: %w", ErrEngine, err)
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].key < refs[j].key })
	for _, ref := range refs {
		if err := removeJournal(ref); err != nil {
			return removed, err
		}
	}
	// The run key's stream, now empty: its reservation freed (the agent
	// makes it again at the key's next journal). One a journal begun
	// since is kept.
	if st, err := js.Stream(ctx, RunStream(name)); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return removed, fmt.Errorf("%w: stream %s: %w", ErrEngine, RunStream(name), err)
	} else if err == nil && st.CachedInfo().State.Msgs == 0 {
		if err := js.DeleteStream(ctx, RunStream(name)); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return removed, fmt.Errorf("%w: delete the journal stream %s: %w", ErrEngine, RunStream(name), err)
		}
		if len(removed) == 0 {
			removed = append(removed, "journal stream "+RunStream(name))
		}
	}
	// The run key's lease bucket, when its journal stream is gone and no
	// lease is held: its reservation freed (the agent makes it again
	// with the stream).
	if _, err := js.Stream(ctx, RunStream(name)); errors.Is(err, jetstream.ErrStreamNotFound) {
		if kv, err := js.KeyValue(ctx, RunLeaseBucket(name)); err == nil {
			if _, err := kv.Keys(ctx); errors.Is(err, jetstream.ErrNoKeysFound) {
				if err := js.DeleteKeyValue(ctx, RunLeaseBucket(name)); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
					return removed, fmt.Errorf("%w: delete the lease bucket %s: %w", ErrEngine, RunLeaseBucket(name), err)
				}
				if len(removed) == 0 {
					removed = append(removed, "lease bucket "+RunLeaseBucket(name))
				}
			}
		}
	}
	// The run key's task queue and results, on a stream and a bucket of
	// their own.
	if err := js.DeleteStream(ctx, RunQueueStream(name)); err == nil {
		removed = addOnce(removed, "task queue "+name)
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return removed, fmt.Errorf("%w: delete the task queue %s: %w", ErrEngine, RunQueueStream(name), err)
	}
	if err := js.DeleteKeyValue(ctx, RunResultsBucket(name)); err == nil {
		removed = addOnce(removed, "results of "+name)
	} else if !errors.Is(err, jetstream.ErrBucketNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return removed, fmt.Errorf("%w: delete the results of %s: %w", ErrEngine, RunResultsBucket(name), err)
	}
	if legacyQueue {
		if err := js.DeleteStream(ctx, TaskStreamPrefix+name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return removed, fmt.Errorf("%w: delete the task queue %s: %w", ErrEngine, name, err)
		}
		removed = addOnce(removed, "task queue "+name)
	}
	if err := js.DeleteKeyValue(ctx, ResultBucketPrefix+name); err == nil {
		removed = addOnce(removed, "results of "+name)
	} else if !errors.Is(err, jetstream.ErrBucketNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return removed, fmt.Errorf("%w: delete the results of %s: %w", ErrEngine, name, err)
	}
	// The queue on the shared streams: its consumer, tasks and results.
	tasks, err := subjectCounts(ctx, js, TasksStream, tasksSubject+name+".>")
	if err != nil {
		return removed, err
	}
	results, err := subjectCounts(ctx, js, "KV_"+ResultsBucket, "$KV."+ResultsBucket+"."+name+".>")
	if err != nil {
		return removed, err
	}
	consumerGone := js.DeleteConsumer(ctx, TasksStream, taskConsumerOf(name))
	if consumerGone != nil && !errors.Is(consumerGone, jetstream.ErrConsumerNotFound) && !errors.Is(consumerGone, jetstream.ErrStreamNotFound) {
		return removed, fmt.Errorf("%w: delete the consumer of queue %s: %w", ErrEngine, name, consumerGone)
	}
	if len(tasks) > 0 || consumerGone == nil {
		if err := purgeSubject(ctx, js, TasksStream, tasksSubject+name+".>"); err != nil {
			return removed, err
		}
		removed = addOnce(removed, "task queue "+name)
	}
	if len(results) > 0 {
		if err := purgeSubject(ctx, js, "KV_"+ResultsBucket, "$KV."+ResultsBucket+"."+name+".>"); err != nil {
			return removed, err
		}
		removed = addOnce(removed, "results of "+name)
	}
	if len(removed) == 0 {
		return nil, fmt.Errorf("%w: no journal or task queue named %q (maker nats ls lists them)", ErrNotFound, name)
	}
	return removed, nil
}

// addOnce appends what to removed unless it is there: a queue left on
// the shared streams and its run key's own is reported once.
func addOnce(removed []string, what string) []string {
	if slices.Contains(removed, what) {
		return removed
	}
	return append(removed, what)
}

// leased reports whether key's lease is held: a journal in use, maybe
// with no line yet.
func leased(ctx context.Context, js jetstream.JetStream, key string) bool {
	run, _, _ := strings.Cut(key, ".")
	for _, name := range []string{RunLeaseBucket(run), LeaseBucket} {
		if kv, err := js.KeyValue(ctx, name); err == nil {
			if _, err := kv.Get(ctx, key); err == nil {
				return true
			}
		}
	}
	return false
}

// purgeSubject removes the messages of stream under subject.
func purgeSubject(ctx context.Context, js jetstream.JetStream, stream, subject string) error {
	st, err := js.Stream(ctx, stream)
	if err == nil {
		err = st.Purge(ctx, jetstream.WithPurgeSubject(subject))
	}
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("%w: purge %s of %s: %w", ErrEngine, subject, stream, err)
	}
	return nil
}
