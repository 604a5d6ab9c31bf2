package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// The engine's names. Streams and buckets are created on first use with
// the configuration below, and used as they are when they exist: an
// operator may create them beforehand (with 3 replicas on a cluster, say)
// and mdap will not change them.
const (
	// JobsStream holds sample jobs: a work-queue stream on subjects
	// mdap.jobs.<route token>, one durable pull consumer per route, shared
	// by every worker of that route.
	JobsStream = "MDAP_JOBS"
	// RepliesStream holds workers' replies: a work-queue stream on
	// subjects mdap.replies.<drawer>.<job id>, one consumer per Drawer.
	RepliesStream = "MDAP_REPLIES"
	// LeaseBucket is the key-value bucket of journal leases, one key per
	// run, expiring a lease TTL after its last refresh.
	LeaseBucket = "MDAP_LEASES"
	// JournalStreamPrefix starts the name of a run's journal stream,
	// MDAP_JOURNAL_<run>, on subject mdap.journal.<run>.
	JournalStreamPrefix = "MDAP_JOURNAL_"
	// TaskStreamPrefix starts the name of a task queue's stream,
	// MDAP_TASKS_<queue>, on subject mdap.tasks.<queue>; its results are
	// in the bucket MDAP_RESULTS_<queue>.
	TaskStreamPrefix = "MDAP_TASKS_"
	// ResultBucketPrefix starts the name of a task queue's result bucket.
	ResultBucketPrefix = "MDAP_RESULTS_"

	jobsSubject    = "mdap.jobs."
	repliesSubject = "mdap.replies."
	cancelSubject  = "mdap.cancel."
	journalSubject = "mdap.journal."
	tasksSubject   = "mdap.tasks."
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
