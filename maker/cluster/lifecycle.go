package cluster

import (
	"context"
	"errors"
	"fmt"
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
	// Results), jobs waiting for the route.
	Messages uint64 `json:"messages"`
	Bytes    uint64 `json:"bytes"`
	// Results is a task queue's result count.
	Results uint64 `json:"results,omitempty"`
	// Created is when it was created; Last when it was last written.
	Created time.Time `json:"created"`
	Last    time.Time `json:"last,omitzero"`
	// Retention is its MaxAge (0: kept until removed).
	Retention time.Duration `json:"retention_ns"`
	// Holder is who holds a journal's lease now, if anyone.
	Holder string `json:"holder,omitempty"`
}

// List returns what runs left on the engine: every journal, task queue
// and route consumer, by kind then name. Errors wrap ErrEngine.
func List(ctx context.Context, js jetstream.JetStream) ([]Leftover, error) {
	var out []Leftover
	var leases jetstream.KeyValue
	if kv, err := js.KeyValue(ctx, LeaseBucket); err == nil {
		leases = kv
	}
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
			l = Leftover{Kind: "journal", Name: strings.TrimPrefix(n, JournalStreamPrefix)}
			if leases != nil {
				if e, err := leases.Get(ctx, l.Name); err == nil {
					l.Holder = string(e.Value())
				}
			}
		case strings.HasPrefix(n, TaskStreamPrefix):
			l = Leftover{Kind: "tasks", Name: strings.TrimPrefix(n, TaskStreamPrefix)}
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
		info, err := st.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: stream %s: %w", ErrEngine, n, err)
		}
		l.Messages, l.Bytes, l.Created, l.Last, l.Retention = info.State.Msgs, info.State.Bytes, info.Created, info.State.LastTime, info.Config.MaxAge
		out = append(out, l)
	}
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

// ErrNotFound: RemoveRun found nothing of that name.
var ErrNotFound = errors.New("nothing of that name on the engine")

// RemoveRun removes what the run or batch name left on the engine: the
// journal of run name (taking its lease first, so a run in progress is
// never removed under its coordinator: maker.ErrJournalLocked), and the
// task queue name with its results and the journals of its tasks
// (name_<task>). It returns what it removed. Errors: ErrConfig (a bad
// name), ErrNotFound, maker.ErrJournalLocked, ErrEngine.
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
	removeJournal := func(run string) error {
		ok, err := exists(JournalStreamPrefix + run)
		if err != nil || !ok {
			return err
		}
		if err := DeleteJournal(ctx, js, run, JournalConfig{}); err != nil {
			return err
		}
		removed = append(removed, "journal "+run)
		return nil
	}
	if err := removeJournal(name); err != nil {
		return removed, err
	}
	ok, err := exists(TaskStreamPrefix + name)
	if err != nil {
		return removed, err
	}
	if ok {
		// The journals of the queue's tasks first: a task in progress
		// keeps its queue.
		var tasks []string
		names := js.StreamNames(ctx)
		for n := range names.Name() {
			if run, ok := strings.CutPrefix(n, JournalStreamPrefix+name+"_"); ok {
				tasks = append(tasks, name+"_"+run)
			}
		}
		if err := names.Err(); err != nil {
			return removed, fmt.Errorf("%w: list streams: %w", ErrEngine, err)
		}
		for _, run := range tasks {
			if err := removeJournal(run); err != nil {
				return removed, err
			}
		}
		if err := js.DeleteStream(ctx, TaskStreamPrefix+name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return removed, fmt.Errorf("%w: delete the task queue %s: %w", ErrEngine, name, err)
		}
		removed = append(removed, "task queue "+name)
	}
	if err := js.DeleteKeyValue(ctx, ResultBucketPrefix+name); err == nil {
		removed = append(removed, "results of "+name)
	} else if !errors.Is(err, jetstream.ErrBucketNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return removed, fmt.Errorf("%w: delete the results of %s: %w", ErrEngine, name, err)
	}
	if len(removed) == 0 {
		return nil, fmt.Errorf("%w: no journal or task queue named %q (maker nats ls lists them)", ErrNotFound, name)
	}
	return removed, nil
}
