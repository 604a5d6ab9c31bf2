package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A run key's task queue, results and leases are, like its journals
// (RunStream), in things of its own, made by the engine's agent and
// bounded by shares of the key's budget (ProvisionConfig.RunKeyBytes):
// on the shared TasksStream, ResultsBucket and LeaseBucket one key could
// fill the bytes every run shares, as many task subjects or keys as it
// liked, and stop every run's batch or lease. A full one refuses that
// key's next task, result or lease (ErrBudgetFull) and no one else's.
//
//   - its lease bucket, RunLeasesPrefix+run, is made with its journal
//     stream when the key first opens a journal (mdap.engine.journal.<run>);
//   - its task stream, RunQueuePrefix+run, and result bucket,
//     RunResultsPrefix+run, when the key first opens its task queue
//     (mdap.engine.runtasks.<run>, which also makes the queue's consumer),
//     so that a run that never runs a batch reserves no room for one.
//
// The shared coordinator (RoleCoordinator) and a server without roles
// keep the shared ones. Each share is reserved on every node holding a
// copy, as the journal stream's budget is: together a run key reserves
// its budget and 9/32 of it more (at least 48 KiB more).
const (
	// RunQueuePrefix starts the name of a run key's task stream,
	// MDAP_RUNQ_<run>: a work-queue stream on disk with the settings of
	// TasksStream, subjects mdap.run.<run>.tasks.<task>, MaxBytes an
	// eighth of the run's budget; its coordinators' consumer is q_<run>.
	RunQueuePrefix = "MDAP_RUNQ_"
	// RunResultsPrefix starts the name of a run key's result bucket,
	// MDAP_RUNRESULTS_<run>: the settings of ResultsBucket (keys
	// <run>.<task>, the first result stands), MaxBytes an eighth of the
	// run's budget.
	RunResultsPrefix = "MDAP_RUNRESULTS_"
	// RunLeasesPrefix starts the name of a run key's lease bucket,
	// MDAP_RUNLEASES_<run>: the settings of LeaseBucket (keys <run> and
	// <run>.<task>, the engine's LeaseTTL), MaxBytes a thirty-second of
	// the run's budget.
	RunLeasesPrefix = "MDAP_RUNLEASES_"
	// minRunShare is the least room of a share: a few leases, tasks or
	// results however small the budget.
	minRunShare int64 = 16 << 10
)

// RunQueueStream is the name of the task stream of run's key.
func RunQueueStream(run string) string { return RunQueuePrefix + run }

// RunResultsBucket is the name of the result bucket of run's key.
func RunResultsBucket(run string) string { return RunResultsPrefix + run }

// RunLeaseBucket is the name of the lease bucket of run's key.
func RunLeaseBucket(run string) string { return RunLeasesPrefix + run }

// runTasksSubject prefixes the tasks of run's key on its own stream:
// mdap.run.<run>.tasks.<task>.
func runTasksSubject(run string) string { return runSubject + run + ".tasks." }

// runShares are the MaxBytes of the task stream, the result bucket and
// the lease bucket of a run key whose budget is budget.
func runShares(budget int64) (queue, results, leases int64) {
	return max(budget/8, minRunShare), max(budget/8, minRunShare), max(budget/32, minRunShare)
}

// runQueueConfig is the task stream of run's key.
func runQueueConfig(run string, n int, maxBytes int64) jetstream.StreamConfig {
	c := tasksStreamConfig(n, maxBytes)
	c.Name, c.Description, c.Subjects = RunQueueStream(run), "mdap task queue of one run key, a share of its budget", []string{runTasksSubject(run) + ">"}
	return c
}

// runResultsConfig is the result bucket of run's key.
func runResultsConfig(run string, n int, maxBytes int64) jetstream.KeyValueConfig {
	c := resultsBucketConfig(n, maxBytes)
	c.Bucket, c.Description = RunResultsBucket(run), "mdap task results of one run key, a share of its budget"
	return c
}

// runLeasesConfig is the lease bucket of run's key.
func runLeasesConfig(run string, n int, ttl time.Duration, maxBytes int64) jetstream.KeyValueConfig {
	c := leaseBucketConfig(n, ttl)
	c.Bucket, c.Description, c.MaxBytes = RunLeaseBucket(run), "mdap journal leases of one run key, a share of its budget", maxBytes
	return c
}

// provisionBucket makes the bucket want, or sets it to want's bounds,
// replicas and TTL; one already so costs a stream info.
func provisionBucket(ctx context.Context, js jetstream.JetStream, want jetstream.KeyValueConfig) error {
	if st, err := js.Stream(ctx, "KV_"+want.Bucket); err == nil {
		got := st.CachedInfo().Config
		if got.MaxBytes == want.MaxBytes && got.Replicas == want.Replicas && got.MaxAge == want.TTL && got.MaxMsgSize == cmpOr(want.MaxValueSize, -1) {
			return nil
		}
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, want); err != nil {
		return provisionErr("the bucket "+want.Bucket, want.Replicas, err)
	}
	return nil
}

// provisionRunQueue makes the task stream and the result bucket of run's
// key, or sets them to the shares of the budget in force.
func provisionRunQueue(ctx context.Context, js jetstream.JetStream, run string, cfg ProvisionConfig) error {
	if err := checkName("run", run); err != nil {
		return err
	}
	queue, results, _ := runShares(cfg.runKeyBytes(run))
	want := runQueueConfig(run, cfg.Replicas, queue)
	st, err := js.Stream(ctx, want.Name)
	if err == nil {
		got := st.CachedInfo().Config
		if got.MaxBytes != want.MaxBytes || got.Replicas != want.Replicas || !slices.Equal(got.Subjects, want.Subjects) {
			err = errors.New("not the engine's settings")
		}
	}
	if err != nil {
		if err := provisionStream(ctx, js, want, cfg.logger()); err != nil {
			return err
		}
	}
	return provisionBucket(ctx, js, runResultsConfig(run, cfg.Replicas, results))
}

// serveRunTasks makes, at run's key's request (mdap.engine.runtasks.<run>),
// its task stream and result bucket and the consumer of its queue.
func serveRunTasks(ctx context.Context, js jetstream.JetStream, req agentRequest, cfg ProvisionConfig) error {
	if err := checkTaskRequest(req); err != nil {
		return err
	}
	if err := provisionRunQueue(ctx, js, req.Name, cfg); err != nil {
		return err
	}
	_, err := js.CreateOrUpdateConsumer(ctx, RunQueueStream(req.Name), taskConsumerConfig(req.Name, runTasksSubject(req.Name), req.AckWait))
	return err
}

// ErrBudgetFull: a run key's budget refused a write of its own run: its
// journal stream (RunStream), task stream, result bucket or lease bucket
// is full (see RunQueuePrefix); the message names which and how to free
// or raise the budget. Only that key's run is refused; a batch
// (SolveBatch) stops on it. It wraps ErrEngine.
var ErrBudgetFull = fmt.Errorf("%w: a run key's budget is full", ErrEngine)

// budgetErr wraps err, a refused write of what into the share of run's
// budget named by thing, in ErrBudgetFull when the share is full, and
// ErrEngine otherwise.
func budgetErr(err error, what, run, thing string) error {
	if !strings.Contains(err.Error(), "maximum bytes exceeded") {
		return fmt.Errorf("%w: %s: %w%s", ErrEngine, what, err, fullHint(err))
	}
	return fmt.Errorf("%w: %s: %w (%s of run key %s, its share of the key's budget, is full: its own run fills it, no other run's; the engine's operator removes finished runs with maker nats rm %s, or raises the budget: maker nats run add %s --bytes SIZE, or the engine's default maker nats --run-key-bytes, ProvisionConfig.RunKeyBytes)",
		ErrBudgetFull, what, err, thing, run, run, run)
}

// ownsRun reports whether run's journals and leases are its run key's
// own (RunStream, RunLeaseBucket), asking the engine's agent to make or
// set them (mdap.engine.journal.<run>, which only that key's permissions
// name): true when the agent did, or, while no agent answers (a stock
// server's provisioner restarting), when it made them before; false for
// the shared coordinator (refused the request) and a server without
// roles. A run with a stream of its own opened with another credential
// that may see it (the shared coordinator) is refused (ErrAuth, naming
// the run key).
func ownsRun(ctx context.Context, js jetstream.JetStream, run string) (bool, error) {
	own := func() bool {
		_, err := unlessRefused(ctx, js.Conn(), "$JS.API.STREAM.INFO."+RunStream(run), func(ctx context.Context) (jetstream.Stream, error) {
			return js.Stream(ctx, RunStream(run))
		})
		return err == nil
	}
	_, err := unlessRefused(ctx, js.Conn(), agentSubject+"journal."+run, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, askAgent(ctx, js.Conn(), "journal."+run, agentRequest{Name: run})
	})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrAuth):
		// Not this run's key: the shared coordinator, which may not
		// read a run key's stream.
		if own() {
			return false, fmt.Errorf("%w: run %s keeps its journals on a stream of its own, %s (its run key's budget): open them with its run key (maker nats run add %s issued runs/%s.nk), not with this credential", ErrAuth, run, RunStream(run), run, run)
		}
		return false, nil
	case errors.Is(err, errNoAgent):
		return own(), nil
	default:
		return false, err
	}
}

// leaseBucketOf is the lease bucket of run: its key's own, or the shared
// one.
func leaseBucketOf(run string, own bool) string {
	if own {
		return RunLeaseBucket(run)
	}
	return LeaseBucket
}

// sharedQueueLeft refuses (ErrOldLayout) the queue of run's key while
// tasks or results of it are left on the shared TasksStream or
// ResultsBucket, where run keys kept them before each had a budget of its
// own: they are not moved, and a batch started anew beside them would
// solve its tasks again.
func sharedQueueLeft(ctx context.Context, js jetstream.JetStream, run string) error {
	tasks, err := subjectCounts(ctx, js, TasksStream, tasksSubject+run+".>")
	if err != nil {
		return err
	}
	results, err := subjectCounts(ctx, js, "KV_"+ResultsBucket, "$KV."+ResultsBucket+"."+run+".>")
	if err != nil {
		return err
	}
	if len(tasks) == 0 && len(results) == 0 {
		return nil
	}
	return fmt.Errorf("%w: the task queue %q has %d tasks and %d results on %s and %s, shared by every run, where run keys kept them before each had a budget of its own (%s, %s); a run key no longer reads there: finish the batch with the mdap that started it, or with the shared coordinator's credential (maker nats --shared-coordinator), or remove it with maker nats rm %s (the admin) and start the batch again",
		ErrOldLayout, run, len(tasks), len(results), TasksStream, ResultsBucket, RunQueueStream(run), RunResultsBucket(run), run)
}
