package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// The engine's names. The engine provisions its streams and buckets
// (Provision) with its settings; on a server without roles a client
// creates what is missing with the same settings.
const (
	// JobsStream holds sample jobs: a work-queue stream on subjects
	// mdap.jobs.<route token>.<publisher's key>, one durable pull
	// consumer per route (mdap.jobs.<route token>.*), shared by every
	// worker of that route.
	JobsStream = "MDAP_JOBS"
	// RepliesStream holds workers' replies: a work-queue stream taking
	// mdap.replies.<token>.<job id>.<worker> of the Drawers the engine
	// serves (a Drawer's token is a hash of its consumer's name), stored
	// as mdap.replies.<token>.w.<worker> with a bound per subject (see
	// repliesStreamConfig), one consumer per Drawer.
	RepliesStream = "MDAP_REPLIES"
	// LeaseBucket is the key-value bucket of journal leases, one key per
	// journal (its run, or <queue>.<task>), expiring a lease TTL after
	// its last refresh.
	LeaseBucket = "MDAP_LEASES"
	// JournalStreamPrefix starts the name of the stream an earlier mdap
	// kept a run's journal on, MDAP_JOURNAL_<run> (subject
	// mdap.journal.<run>); journals are now in JournalsStream. Such a run
	// is refused with ErrOldLayout, exported by ExportJournal and removed
	// by RemoveRun.
	JournalStreamPrefix = "MDAP_JOURNAL_"
	// TaskStreamPrefix starts the name of the stream an earlier mdap kept
	// a task queue on, MDAP_TASKS_<queue>, with its results in the bucket
	// MDAP_RESULTS_<queue> (ResultBucketPrefix); queues are now in
	// TasksStream and ResultsBucket. Such a queue is refused with
	// ErrOldLayout and removed by RemoveRun.
	TaskStreamPrefix = "MDAP_TASKS_"
	// ResultBucketPrefix starts the name of an earlier mdap's result
	// bucket of one queue (see TaskStreamPrefix).
	ResultBucketPrefix = "MDAP_RESULTS_"

	jobsSubject    = "mdap.jobs."
	repliesSubject = "mdap.replies."
	cancelSubject  = "mdap.cancel."
	journalSubject = "mdap.journals."
	tasksSubject   = "mdap.queues."

	// legacyJournalSubject is the subject prefix of an earlier mdap's
	// journal streams; the shared streams use other subjects, since
	// JetStream refuses two streams with overlapping subjects.
	legacyJournalSubject = "mdap.journal."
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// CheckRunName returns nil when run can name a run on the engine (a
// journal, --journal nats:RUN in the command, or a task queue): 1 to 64
// letters, digits, '-' or '_'. Otherwise it returns an error wrapping
// [ErrConfig] that says so. CreateJournal, OpenJournal, DeleteJournal,
// ExportJournal, RemoveRun and OpenTaskQueue refuse the same names; call
// it to refuse one before connecting. Cost: one regular-expression match.
func CheckRunName(run string) error { return checkName("run", run) }

// checkName checks a run, queue or task name: 1 to 64 letters, digits,
// '-' or '_', so it is one token of a subject and part of a stream name.
func checkName(kind, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: %s name %q: use 1 to 64 letters, digits, '-' or '_'", ErrConfig, kind, name)
	}
	return nil
}

// RouteToken is the subject token of a route (a model identity): up to 24
// lower-case letters and digits of it, for people reading subjects, then
// 12 hex digits of its SHA-256, so distinct routes never share a queue.
// Workers take jobs from mdap.jobs.<token>; the route's consumer is named
// w-<token>.
func RouteToken(route string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(route) {
		if b.Len() >= 24 {
			break
		}
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	sum := sha256.Sum256([]byte(route))
	s := strings.TrimRight(b.String(), "-")
	if s == "" {
		s = "m"
	}
	return s + "-" + hex.EncodeToString(sum[:6])
}

func workerConsumer(token string) string { return "w-" + token }

// routeJobs is the subject pattern of route token's jobs, of every
// publisher: the filter of the route's consumer, and the subject the
// engine's JobsStream takes for a route it serves.
func routeJobs(token string) string { return jobsSubject + token + ".*" }
