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

// Runs' data lives under per-run subjects of three shared streams that
// the engine provisions once, with its replicas (ProvisionConfig.Replicas),
// beside the sample streams and the lease bucket:
//
//   - JournalsStream: one subject per journal, mdap.journals.<run> (a
//     batch's task: mdap.journals.<queue>.<task>), one message per line,
//     for the shared coordinator and a server without roles; a run key's
//     journals are on its own stream (RunStream, below);
//   - TasksStream: one subject per queued task, mdap.queues.<queue>.<task>,
//     holding at most one message (a task queued twice is queued once);
//   - ResultsBucket: one key per task result, <queue>.<task>;
//
// the shared coordinator's and a server's without roles: a run key's
// task queue, results and leases are in things of its own too
// (RunQueueStream, RunResultsBucket, RunLeaseBucket: see runkey.go).
// So no client ever creates a stream, a run's data has the replicas of the
// engine, and a run coordinator's permissions (RunRole) name its own
// streams and buckets only. A run's retention (JournalConfig.MaxAge,
// TaskQueueConfig.MaxAge) is a per-message TTL, bounded by the stream's
// MaxAge (MaxRetention).

// The shared streams and bucket of runs' data.
const (
	// JournalsStream holds the journals but run keys' (RunStream): a limits stream
	// on disk, subjects mdap.journals.>, that refuses message deletion
	// (DenyDelete), and a new line past RunLines lines of one journal
	// (DiscardNewPerSubject), never dropping an old one.
	JournalsStream = "MDAP_JOURNALS"
	// TasksStream holds every task queue: a work-queue stream on disk,
	// subjects mdap.tasks.<queue>.<task>, one durable consumer per queue
	// (q_<queue>) shared by the queue's coordinators.
	TasksStream = "MDAP_TASKS"
	// ResultsBucket is the key-value bucket of task results, key
	// <queue>.<task>, one value per key (create-only: the first result
	// of a task stands).
	ResultsBucket = "MDAP_RESULTS"
)

// MaxRetention is the longest retention a run may ask for, and the MaxAge
// of the shared run streams: nothing a run stores outlives it.
const MaxRetention = 10 * 365 * 24 * time.Hour

// DefaultRunLines bounds the lines of one journal (and the results of one
// queue are bounded by its tasks) when ProvisionConfig.RunLines is 0:
// about four million, a run of four million steps.
const DefaultRunLines int64 = 1 << 22

// lineHeader numbers a journal line from 1 (diagnostics: the first line a
// retention removed).
const lineHeader = "Mdap-Line"

// taskConsumerOf names the consumer of queue's coordinators on its task
// stream (TasksStream, or its run key's RunQueueStream).
func taskConsumerOf(queue string) string { return "q_" + queue }

// journalsStreamConfig is the shared stream of journals.
func journalsStreamConfig(n int, maxBytes, lines int64) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:                 JournalsStream,
		Description:          "mdap journals, one subject per run",
		Subjects:             []string{journalSubject + ">"},
		Retention:            jetstream.LimitsPolicy,
		Storage:              jetstream.FileStorage,
		Replicas:             replicas(n),
		MaxAge:               MaxRetention,
		MaxBytes:             cmpOr(maxBytes, DefaultRunBytes),
		MaxMsgsPerSubject:    cmpOr(lines, DefaultRunLines),
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		DenyDelete:           true,
		AllowMsgTTL:          true,
		AllowDirect:          true,
	}
}

// tasksStreamConfig is the shared work queue of tasks.
func tasksStreamConfig(n int, maxBytes int64) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:                 TasksStream,
		Description:          "mdap task queues, one subject per task",
		Subjects:             []string{tasksSubject + ">"},
		Retention:            jetstream.WorkQueuePolicy,
		Storage:              jetstream.FileStorage,
		Replicas:             replicas(n),
		MaxAge:               MaxRetention,
		MaxBytes:             cmpOr(maxBytes, DefaultRunBytes),
		MaxMsgsPerSubject:    1,
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		AllowMsgTTL:          true,
	}
}

// resultsBucketConfig is the shared bucket of task results.
func resultsBucketConfig(n int, maxBytes int64) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:         ResultsBucket,
		Description:    "mdap task results, key <queue>.<task>",
		History:        1,
		TTL:            MaxRetention,
		MaxBytes:       cmpOr(maxBytes, DefaultRunBytes),
		Storage:        jetstream.FileStorage,
		Replicas:       replicas(n),
		LimitMarkerTTL: time.Minute,
	}
}

// provisionRunStreams makes the shared run streams and bucket have the
// engine's settings (see Provision).
func provisionRunStreams(ctx context.Context, js jetstream.JetStream, cfg ProvisionConfig) error {
	for _, want := range []jetstream.StreamConfig{journalsStreamConfig(cfg.Replicas, cfg.RunBytes, cfg.RunLines), tasksStreamConfig(cfg.Replicas, cfg.RunBytes)} {
		if err := provisionStream(ctx, js, want, cfg.logger()); err != nil {
			return err
		}
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, resultsBucketConfig(cfg.Replicas, cfg.RunBytes)); err != nil {
		return provisionErr("the result bucket "+ResultsBucket, cfg.Replicas, err)
	}
	return nil
}

// ensureRunStreams finds the shared run streams, or creates them where
// the client may (a server without roles, which nobody provisions).
//
// The order matters: a client that finds the stream it uses (runStream)
// goes on without making the rest, so what a stream's users need is made
// before that stream: the result bucket before the tasks stream, which
// a task queue finds and then opens the bucket, and the journals stream
// last.
func ensureRunStreams(ctx context.Context, js jetstream.JetStream, n int) error {
	if _, err := js.KeyValue(ctx, ResultsBucket); errors.Is(err, jetstream.ErrBucketNotFound) {
		_, err = js.CreateKeyValue(ctx, resultsBucketConfig(n, 0))
		if err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
			return fmt.Errorf("%w: bucket %s: %w", ErrEngine, ResultsBucket, err)
		}
	}
	if _, err := ensureStream(ctx, js, tasksStreamConfig(n, 0)); err != nil {
		return err
	}
	_, err := ensureStream(ctx, js, journalsStreamConfig(n, 0, 0))
	return err
}

// provisionErr wraps an error of making what: a placement the cluster
// cannot give (more replicas than nodes, or a single server) wraps
// ErrConfig naming Replicas; one refused because a node is offline, and
// anything else, ErrEngine.
func provisionErr(what string, n int, err error) error {
	if noJetStream(err) {
		return errNoJetStream(what, err)
	}
	if strings.Contains(err.Error(), "insufficient storage") || strings.Contains(err.Error(), "insufficient resources") {
		return fmt.Errorf("%w: the servers cannot reserve the room of %s (%w): JetStream reserves a stream's max bytes on each node holding a copy; free disk space or raise each node's max_file_store, or lower ProvisionConfig.RunBytes (%s by default)", ErrConfig, what, err, "2 GiB")
	}
	if strings.Contains(err.Error(), "peer offline") {
		// The cluster has the nodes, one is not answering yet (a cluster
		// still forming) or now: not a setting to change, and a caller
		// may try again (maker nats provision does).
		return fmt.Errorf("%w: provision %s: a node of the cluster is offline, so %d copies cannot be placed yet: %w", ErrEngine, what, n, err)
	}
	var je jetstream.JetStreamError
	if n > 1 && errors.As(err, &je) && je.APIError() != nil {
		switch je.APIError().ErrorCode {
		case jsErrCodeInsufficientResources, jsErrCodeReplicasNotSupported, jsErrCodeNoSuitablePeers:
			return fmt.Errorf("%w: Replicas = %d: the server cannot place %d copies of %s (%s): use at most the number of JetStream nodes of the cluster, and 1 on a single server", ErrConfig, n, n, what, je.APIError().Description)
		}
	}
	if n > 1 && (strings.Contains(err.Error(), "replicas > 1 not supported") || strings.Contains(err.Error(), "no suitable peers")) {
		return fmt.Errorf("%w: Replicas = %d: the server cannot place %d copies of %s (%w): use at most the number of JetStream nodes of the cluster, and 1 on a single server", ErrConfig, n, n, what, err)
	}
	return fmt.Errorf("%w: provision %s: %w", ErrEngine, what, err)
}

// JetStream API error codes the jetstream package names no constant for.
const (
	jsErrCodeReplicasNotSupported  = 10074 // replicas > 1 not supported in non-clustered mode
	jsErrCodeNoSuitablePeers       = 10005 // no suitable peers for placement
	jsErrCodeInsufficientResources = 10023 // insufficient resources
)

// ErrOldLayout: a run or batch started by an earlier mdap, whose data is
// on streams of its own (MDAP_JOURNAL_<run>, MDAP_TASKS_<queue>,
// MDAP_RESULTS_<queue>), not under the shared streams' subjects. It is
// not resumed: finish it with the mdap that started it, or remove it with
// maker nats rm (RemoveRun) and start again.
var ErrOldLayout = errors.New("a run of an earlier mdap")

// legacyStreamExists reports whether the stream name of an earlier mdap
// exists. A client that may not look (a run coordinator asking about
// another's) learns nothing: false.
func legacyStreamExists(ctx context.Context, js jetstream.JetStream, name string) bool {
	if name == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := unlessRefused(ctx, js.Conn(), "$JS.API.STREAM.INFO."+name, func(ctx context.Context) (jetstream.Stream, error) {
		return js.Stream(ctx, name)
	})
	return err == nil
}

// oldLayoutErr is the refusal of run, found on the stream of an earlier
// mdap.
func oldLayoutErr(what, run, stream string) error {
	return fmt.Errorf("%w: %s %q is on the stream %s, which an earlier mdap made for it alone; this mdap keeps runs under the subjects of %s: finish it with the mdap that started it, or remove it with maker nats rm %s (the admin) and start it again", ErrOldLayout, what, run, stream, JournalsStream+", "+TasksStream+" and "+ResultsBucket, run)
}

// A run key's journals (RunRole: its run's, and its batch's tasks') are
// on a stream of their own, RunStreamPrefix+run, whose bytes are that key's
// budget (ProvisionConfig.RunKeyBytes): on the shared JournalsStream one
// key could fill the bytes every run's journal shares, as many task
// subjects as it liked, each up to RunLines lines. The engine's agent
// makes the stream when the run's key first opens a journal
// (mdap.engine.journal.<run>, which only that key's permissions name), so
// no client creates a stream and a key asks for its own run's only; a
// full one refuses the flooder's own lines and no one else's. The shared
// coordinator (RoleCoordinator) and a server without roles keep journals
// on JournalsStream.
const (
	// RunStreamPrefix starts the name of a run key's journal stream,
	// MDAP_RUN_<run>: subjects mdap.run.<run>.journal (the run's journal)
	// and mdap.run.<run>.journal.<task> (its batch's task journals), a
	// limits stream on disk with the settings of JournalsStream and
	// MaxBytes the run's budget.
	RunStreamPrefix = "MDAP_RUN_"
	// DefaultRunKeyBytes is the budget of one run key's journals when
	// ProvisionConfig.RunKeyBytes is 0: 256 MiB, about 750,000 lines.
	// JetStream reserves it on every node holding a copy, so the engine's
	// store needs that room for each run key whose journal it holds.
	DefaultRunKeyBytes int64 = 256 << 20
	runSubject               = "mdap.run."
)

// RunStream is the name of the journal stream of run's key.
func RunStream(run string) string { return RunStreamPrefix + run }

// runJournalSubject is the subject of the journal key (a run, or
// <queue>.<task>) on its run's own stream: mdap.run.<run>.journal, or
// mdap.run.<queue>.journal.<task>.
func runJournalSubject(key string) string {
	run, task, ok := strings.Cut(key, ".")
	if !ok {
		return runSubject + run + ".journal"
	}
	return runSubject + run + ".journal." + task
}

// runStreamConfig is the journal stream of run's key, bounded by
// maxBytes.
func runStreamConfig(run string, n int, maxBytes, lines int64) jetstream.StreamConfig {
	subj := runJournalSubject(run)
	c := journalsStreamConfig(n, maxBytes, lines)
	c.Name, c.Description, c.Subjects = RunStream(run), "mdap journals of one run key, its budget", []string{subj, subj + ".>"}
	return c
}

// runKeyBytes is the budget of run: RunKeyBytesOf's, else RunKeyBytes,
// else DefaultRunKeyBytes.
func (c ProvisionConfig) runKeyBytes(run string) int64 {
	if c.RunKeyBytesOf != nil {
		if n := c.RunKeyBytesOf(run); n > 0 {
			return n
		}
	}
	return cmpOr(c.RunKeyBytes, DefaultRunKeyBytes)
}

// provisionRunJournals makes run's journal stream and lease bucket, or
// sets them to the engine's settings (a budget raised since, say); ones
// already so cost a stream info each.
func provisionRunJournals(ctx context.Context, js jetstream.JetStream, run string, cfg ProvisionConfig) error {
	if err := checkName("run", run); err != nil {
		return err
	}
	want := runStreamConfig(run, cfg.Replicas, cfg.runKeyBytes(run), cfg.RunLines)
	st, err := js.Stream(ctx, want.Name)
	if err == nil {
		got := st.CachedInfo().Config
		if got.MaxBytes != want.MaxBytes || got.MaxMsgsPerSubject != want.MaxMsgsPerSubject || got.Replicas != want.Replicas || !slices.Equal(got.Subjects, want.Subjects) {
			err = errors.New("not the engine's settings")
		}
	}
	if err != nil {
		if err := provisionStream(ctx, js, want, cfg.logger()); err != nil {
			return err
		}
	}
	_, _, leases := runShares(cfg.runKeyBytes(run))
	return provisionBucket(ctx, js, runLeasesConfig(run, cfg.Replicas, cmpOr(cfg.LeaseTTL, DefaultLeaseTTL), leases))
}

// journalHome finds the stream and subject of the journal ref: its run's
// own stream when its key owns it (own, see ownsRun), else the shared
// JournalsStream (the shared coordinator, a server without roles). A
// journal left on JournalsStream by a run key before it had a stream of
// its own is refused, naming how to move it (ErrOldLayout).
func journalHome(ctx context.Context, js jetstream.JetStream, ref journalRef, n int, own bool) (jetstream.Stream, string, error) {
	run, _, _ := strings.Cut(ref.key, ".")
	if !own {
		shared, err := runStream(ctx, js, JournalsStream, n)
		return shared, journalSubject + ref.key, err
	}
	st, err := js.Stream(ctx, RunStream(run))
	if err != nil {
		return nil, "", fmt.Errorf("%w: stream %s: %w", ErrEngine, RunStream(run), err)
	}
	if lines, err := subjectCounts(ctx, js, JournalsStream, journalSubject+ref.key); err == nil && lines[journalSubject+ref.key] > 0 {
		return nil, "", fmt.Errorf("%w: %s is on the stream %s, shared by every run, where run keys kept journals before each had a budget of its own (%s); a run key no longer writes there: finish it with the mdap that started it, or export it as the admin (cluster.ExportJournal) and resume the run from that file (--journal FILE --resume), or remove it with maker nats rm %s (the admin) and start again",
			ErrOldLayout, JournalName(ref.key), JournalsStream, RunStream(run), run)
	}
	return st, runJournalSubject(ref.key), nil
}
