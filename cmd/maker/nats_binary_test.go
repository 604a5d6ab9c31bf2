package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The simulated model of the NATS tests: noisy, so that races are long
// and red flags happen; workers and coordinators give the same flags.
var natsSim = []string{"--model", "sim", "--seed", "11", "--p", "0.9", "--flag-rate", "0.05"}

// startNATS runs `maker nats --shared-coordinator` on a free loopback
// port and returns its URL; $MDAP_NATS_CREDS names its credentials
// folder for the test's children, whose coordinators sign in with the
// shared coordinator.nk (the tests of what a coordinator does; the
// default, run keys only, is TestBinaryNATSRunKeysByDefault's).
func startNATS(t *testing.T) string {
	t.Helper()
	url, _ := startNATSIn(t, t.TempDir(), "--shared-coordinator")
	return url
}

// startNATSIn runs `maker nats` with store and the extra flags on a free
// loopback port and returns its URL and the child; $MDAP_NATS_CREDS names
// its credentials folder (store/creds) for the test's children. Before it
// starts, testWorkers worker identities are issued there (w1, w2, ...):
// startWorker gives each worker the next.
func startNATSIn(t *testing.T, store string, extra ...string) (string, *child) {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "nats.out"))
	require.NoError(t, err)
	defer out.Close()
	creds := filepath.Join(store, "creds")
	for k := 1; k <= testWorkers; k++ {
		if name := "w" + strconv.Itoa(k); !fileExists(filepath.Join(creds, "workers", name+".pub")) {
			_, err := cluster.AddWorker(creds, name)
			require.NoError(t, err)
		}
	}
	setChildEnv(t, cluster.CredsEnv, creds)
	// --ack-wait 1s: the engine's, which the workers' redeliveries wait.
	srv := start(t, out, append([]string{"nats", "--addr", "127.0.0.1:0", "--store", store, "--ack-wait", "1s"}, extra...)...)
	var url string
	// The notes on stderr are written before the URL, but reach srv.stderr
	// through a pipe while stdout goes to a file: wait for them too (the
	// serving line and the credentials note after it).
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(out.Name())
		url, _, _ = strings.Cut(string(b), "\n")
		// maker nats writes its notes (stderr) before the URL (stdout),
		// but stderr reaches srv.stderr through a pipe the exec package
		// copies: wait for the credentials note, the line after "serving".
		_, notes, _ := strings.Cut(srv.stderr.String(), "JetStream serving ")
		return strings.HasPrefix(url, "nats://") && strings.Contains(string(b), "\n") && strings.Count(notes, "\n") >= 2
	}, 20*time.Second, 10*time.Millisecond, "maker nats prints its URL and notes")
	t.Cleanup(func() {
		if srv.cmd.ProcessState == nil {
			_ = srv.cmd.Process.Signal(syscall.SIGTERM)
			assert.Equal(t, 0, srv.wait(t, 30*time.Second), "maker nats stops cleanly: %s", srv.stderr.String())
		}
	})
	return url, srv
}

// TestBinaryNATSRunKeysByDefault: a fresh maker nats writes no shared
// coordinator key (one that may touch every run): admin.nk only. A coordinator given the folder and no key of its run
// exits 2 at once naming maker nats run add; a coordinator.pub put in the
// folder is not accepted (its holder is refused). With
// --shared-coordinator the folder has coordinator.nk, mode 0600, and its
// holder signs in. --help names the flag's risk.
func TestBinaryNATSRunKeysByDefault(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	creds := filepath.Join(store, "creds")
	url, _ := startNATSIn(t, store)
	assert.NoFileExists(t, cluster.SeedFile(creds, cluster.RoleCoordinator))
	assert.NoFileExists(t, cluster.PubFile(creds, cluster.RoleCoordinator))
	assert.FileExists(t, cluster.SeedFile(creds, cluster.RoleAdmin))
	began := time.Now()
	c := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--journal", "nats:nokey", "--progress", "off"}, natsSim...)...)
	assert.Equal(t, 2, c.wait(t, time.Minute), c.stderr.String())
	assert.Contains(t, c.stderr.String(), "maker nats run add nokey")
	assert.Less(t, time.Since(began), 20*time.Second, "refused at once")

	// The opt-in: coordinator.nk, 0600.
	shared := t.TempDir()
	sharedURL, _ := startNATSIn(t, shared, "--shared-coordinator")
	seed := cluster.SeedFile(filepath.Join(shared, "creds"), cluster.RoleCoordinator)
	st, err := os.Stat(seed)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	signIn := func(url string) error {
		opts, err := cluster.Credentials(seed, t.Name())
		require.NoError(t, err)
		nc, err := cluster.Connect(url, t.Name(), opts...)
		if err == nil {
			nc.Close()
		}
		return err
	}
	require.NoError(t, signIn(sharedURL), "the shared coordinator key signs in where it was opted in")

	// That coordinator key put in the default engine's folder is not
	// accepted by it, even after its reload.
	pub, err := os.ReadFile(cluster.PubFile(filepath.Join(shared, "creds"), cluster.RoleCoordinator))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cluster.PubFile(creds, cluster.RoleCoordinator), pub, 0o600))
	time.Sleep(2 * cluster.CredsEvery) // maker nats reads the folder again
	assert.ErrorIs(t, signIn(url), nats.ErrAuthorization, "a coordinator.pub without --shared-coordinator")
	refused := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--nats-creds", seed, "--progress", "off"}, natsSim...)...)
	assert.Equal(t, 1, refused.wait(t, time.Minute), refused.stderr.String())
	assert.Contains(t, refused.stderr.String(), "refused")

	help := start(t, nil, "nats", "--help")
	require.Equal(t, 0, help.wait(t, 30*time.Second))
	assert.Contains(t, help.stdout.String(), "--shared-coordinator")
	assert.Contains(t, help.stdout.String(), "RISK")
}

// connectRole connects to url with the role's credential from
// $MDAP_NATS_CREDS.
func connectRole(t *testing.T, url string, role cluster.Role) jetstream.JetStream {
	t.Helper()
	opts, err := cluster.Credentials(cluster.SeedFile(childGetenv(t, cluster.CredsEnv), role), t.Name())
	require.NoError(t, err)
	nc, err := cluster.Connect(url, t.Name(), opts...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}

// startWorker runs `maker worker` on url, signed in with the next worker
// identity startNATSIn issued (unless extra gives --nats-creds).
func startWorker(t *testing.T, url string, extra ...string) *child {
	t.Helper()
	args := append([]string{"worker", "--nats", url, "--ack-wait", "1s"}, natsSim...)
	if !slices.Contains(extra, "--nats-creds") {
		args = append(args, nextIdentity(t)...)
	}
	return start(t, nil, append(args, extra...)...)
}

// testWorkers is how many worker identities startNATSIn issues.
const testWorkers = 8

// identitiesGiven counts, by credentials folder, the identities
// nextIdentity gave.
var identitiesGiven sync.Map // folder -> *atomic.Int32

// nextIdentity returns the flags that sign a worker in with the next
// identity startNATSIn issued in $MDAP_NATS_CREDS (--identity wK); none
// when the test has no credentials folder.
func nextIdentity(t *testing.T) []string {
	t.Helper()
	creds := childGetenv(t, cluster.CredsEnv)
	if !fileExists(filepath.Join(creds, "workers", "w1.pub")) {
		return nil // not an engine of startNATSIn's
	}
	n, _ := identitiesGiven.LoadOrStore(creds, new(atomic.Int32))
	k := n.(*atomic.Int32).Add(1)
	require.LessOrEqual(t, int(k), testWorkers, "a test starts at most %d workers on one engine", testWorkers)
	return []string{"--identity", "w" + strconv.Itoa(int(k))}
}

// stopWorkers stops workers with SIGTERM and returns how many jobs were
// redelivered to them, from their closing lines.
func stopWorkers(t *testing.T, ws ...*child) (redelivered int) {
	t.Helper()
	re := regexp.MustCompile(`redelivered to it (\d+)`)
	for _, w := range ws {
		require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
		require.Equal(t, 0, w.wait(t, 30*time.Second), "a worker stops cleanly on SIGTERM: %s", w.stderr.String())
		m := re.FindStringSubmatch(w.stderr.String())
		require.NotNil(t, m, w.stderr.String())
		n, _ := strconv.Atoi(m[1])
		redelivered += n
	}
	return redelivered
}

// sameRun asserts that two hanoi summaries are the same run.
func sameRun(t *testing.T, want, got hanoiSummary) {
	t.Helper()
	assert.True(t, got.Solved)
	assert.Zero(t, got.WrongSteps)
	assert.Equal(t, want.Steps, got.Steps)
	assert.Equal(t, want.Valid, got.Valid)
	assert.Equal(t, want.Flagged, got.Flagged)
	assert.Equal(t, want.Errors, got.Errors)
	assert.Equal(t, want.Flags, got.Flags)
	assert.Equal(t, want.InputTokens, got.InputTokens)
	assert.Equal(t, want.OutputTokens, got.OutputTokens)
}

func summary(t *testing.T, c *child) hanoiSummary {
	t.Helper()
	var s hanoiSummary
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s), "stdout %q stderr %q", c.stdout.String(), c.stderr.String())
	return s
}

// TestBinaryNATSWorkerKilledMidRun: an embedded server, three workers and
// a coordinator, as separate processes; one worker is frozen while it
// holds a job, then killed with SIGKILL. The job is redelivered to a live
// worker, and the 10-disk run ends exactly as a local run with the same
// seed.
func TestBinaryNATSWorkerKilledMidRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	localJournal := filepath.Join(dir, "local.jsonl")
	// The local run, the plain child, runs while the engine's run does.
	ref := start(t, nil, append([]string{"hanoi", "--json", "--progress", "off", "--disks", "10", "--journal", localJournal}, natsSim...)...)

	url := startNATS(t)
	// The workers log, as JSON lines, each redelivered job they take; the
	// victim also each job it takes and ends.
	live := []*child{
		startWorker(t, url, "--log-format", "json"),
		startWorker(t, url, "--log-format", "json"),
	}
	journal := filepath.Join(dir, "remote.jsonl")
	// --min-workers 1: one identity's votes decide a step, as in process
	// (each worker signs in with an identity of its own).
	coord := start(t, nil, append([]string{"hanoi", "--disks", "10", "--nats", url, "--journal", journal, "--json", "--progress", "off", "--min-workers", "1"}, natsSim...)...)
	require.Eventually(t, func() bool { return countLines(journal) > 300 }, time.Minute, 5*time.Millisecond)

	// The victim joins mid-run with a model that takes 3s a call (the
	// answers are the same), so a job it took is still held when it is
	// frozen, a few milliseconds later. A live worker taking that job
	// redelivered proves the hold: a stall of the journal is no proof (a
	// loaded machine stalls too), nor is any redelivery (a live worker
	// stalled past --ack-wait has its job redelivered too). Then kill it.
	victim := startWorker(t, url, "--log-format", "json", "--log-level", "debug", "--latency", "3s")
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 10, "the frozen worker never held a job that was redelivered")
		require.True(t, waitFor(func() bool { return len(heldJobs(victim.stderr.String())) > 0 }, time.Minute),
			"the victim takes a job: %s", victim.stderr.String())
		require.NoError(t, victim.cmd.Process.Signal(syscall.SIGSTOP))
		time.Sleep(20 * time.Millisecond) // what it wrote reaches its buffer
		held := heldJobs(victim.stderr.String())
		// A held job is redelivered after --ack-wait (1s) without a
		// progress report.
		if len(held) > 0 && waitFor(func() bool { return tookRedelivered(held, live) }, 10*time.Second) {
			t.Logf("attempt %d: the frozen worker held %d job(s); one was redelivered", attempt, len(held))
			break
		}
		require.NoError(t, victim.cmd.Process.Signal(syscall.SIGCONT))
	}
	require.NoError(t, victim.cmd.Process.Kill())
	_ = victim.wait(t, 10*time.Second)

	require.Equal(t, 0, coord.wait(t, 2*time.Minute), "the run completes without the dead worker: %s", coord.stderr.String())
	require.Equal(t, 0, ref.wait(t, 2*time.Minute), ref.stderr.String())
	sameRun(t, ref.summary(t), summary(t, coord))
	assert.Equal(t, decided(t, localJournal), decided(t, journal), "every step's winner, key and votes")
	assert.GreaterOrEqual(t, stopWorkers(t, live...), 1, "the dead worker's job was redelivered")
}

// workerLog is a line of `maker worker --log-format json`.
type workerLog struct {
	Msg string `json:"msg"`
	Job string `json:"job"`
}

// workerLogs returns the JSON lines of a worker's stderr; a line being
// written is left out.
func workerLogs(stderr string) []workerLog {
	var out []workerLog
	for _, line := range strings.Split(stderr, "\n") {
		var l workerLog
		if json.Unmarshal([]byte(line), &l) == nil && l.Job != "" {
			out = append(out, l)
		}
	}
	return out
}

// heldJobs returns the jobs a worker logged taking and not ending.
func heldJobs(stderr string) map[string]bool {
	held := map[string]bool{}
	for _, l := range workerLogs(stderr) {
		switch l.Msg {
		case "took a job":
			held[l.Job] = true
		case "job done":
			delete(held, l.Job)
		}
	}
	return held
}

// tookRedelivered reports whether one of the workers logged taking one of
// the jobs redelivered.
func tookRedelivered(jobs map[string]bool, workers []*child) bool {
	for _, w := range workers {
		for _, l := range workerLogs(w.stderr.String()) {
			if l.Msg == "took a redelivered job" && jobs[l.Job] {
				return true
			}
		}
	}
	return false
}

// waitFor reports whether cond becomes true within limit.
func waitFor(cond func() bool, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestBinaryNATSCoordinatorKilledAndResumed: a coordinator journaling on
// the engine is killed with SIGKILL mid-run; another process resumes the
// run from the JetStream journal, once the dead one's lease expires, and
// ends with the same result as an uninterrupted run, no step twice.
func TestBinaryNATSCoordinatorKilledAndResumed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	localJournal := filepath.Join(dir, "local.jsonl")
	// The uninterrupted run, the plain child, runs while the engine's run
	// does.
	ref := start(t, nil, append([]string{"hanoi", "--json", "--progress", "off", "--disks", "10", "--journal", localJournal}, natsSim...)...)

	url := startNATS(t)
	// The lease outlives its dead holder by 8 s, not the default 20
	// (cluster.DefaultLeaseTTL): what is shown is that the resume waits
	// the lease out, whatever its length.
	setLeaseTTL(t, url, 8*time.Second)
	workers := []*child{startWorker(t, url, "--inflight", "2"), startWorker(t, url, "--inflight", "2")}
	js := connectRole(t, url, cluster.RoleCoordinator)
	lines := func() uint64 {
		st, err := js.Stream(context.Background(), cluster.JournalsStream)
		if err != nil {
			return 0
		}
		info, err := st.Info(context.Background(), jetstream.WithSubjectFilter("mdap.journals.run-1"))
		if err != nil {
			return 0
		}
		return info.State.Subjects["mdap.journals.run-1"]
	}

	// --min-workers 1: one identity's votes decide a step, as in process.
	args := append([]string{"hanoi", "--disks", "10", "--nats", url, "--journal", "nats:run-1", "--json", "--progress", "off", "--min-workers", "1"}, natsSim...)
	first := start(t, nil, args...)
	require.Eventually(t, func() bool { return lines() > 300 }, time.Minute, 5*time.Millisecond)
	require.NoError(t, first.cmd.Process.Kill())
	_ = first.wait(t, 10*time.Second)
	killedAt := lines()
	require.Less(t, killedAt, uint64(1000), "killed mid-run")

	second := start(t, nil, append(args, "--resume")...)
	require.Equal(t, 0, second.wait(t, 2*time.Minute), second.stderr.String())
	got := summary(t, second)
	require.Equal(t, 0, ref.wait(t, 2*time.Minute), ref.stderr.String())
	sameRun(t, ref.summary(t), got)
	assert.GreaterOrEqual(t, got.Resumed, int(killedAt)-2, "resumed from the journal, not solved again")
	assert.Contains(t, second.stderr.String(), "waiting up to", "the dead coordinator's lease held the run for a while")

	var buf bytes.Buffer
	require.NoError(t, cluster.ExportJournal(context.Background(), js, "run-1", &buf))
	exported := filepath.Join(dir, "exported.jsonl")
	require.NoError(t, os.WriteFile(exported, buf.Bytes(), 0o644))
	assert.Equal(t, decided(t, localJournal), decided(t, exported), "each step once, the same winners, keys and votes")
	stopWorkers(t, workers...)

	// The finished run's journal is kept, and a new run may not take its
	// name.
	c := start(t, nil, args...)
	assert.Equal(t, 2, c.wait(t, 30*time.Second))
	assert.Contains(t, c.stderr.String(), "journal already exists")
}

// setLeaseTTL sets the TTL of the engine's lease bucket to ttl, as maker
// nats provisions it with cluster.ProvisionConfig.LeaseTTL: a run's
// lease outlives a coordinator that died by ttl. Signed in as the admin.
func setLeaseTTL(t *testing.T, url string, ttl time.Duration) {
	t.Helper()
	js := connectRole(t, url, cluster.RoleAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "KV_"+cluster.LeaseBucket)
	require.NoError(t, err)
	cfg := st.CachedInfo().Config
	cfg.MaxAge = ttl
	cfg.Duplicates = min(cfg.Duplicates, ttl) // at most the age, as a key-value bucket of that TTL has
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, cluster.LeaseBucket)
	require.NoError(t, err)
	status, err := kv.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, ttl, status.TTL(), "the lease bucket's TTL")
}

// TestBinaryNATSAuthOnByDefault: maker nats generates role credentials
// (mode 0600) and refuses a client without them, with a message naming
// both ways in; a token server's wrong token gets the same hint.
func TestBinaryNATSAuthOnByDefault(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	dir := childGetenv(t, cluster.CredsEnv)
	for _, seed := range []string{cluster.SeedFile(dir, cluster.RoleCoordinator), cluster.SeedFile(dir, cluster.RoleAdmin), filepath.Join(dir, "workers", "w1.nk")} {
		st, err := os.Stat(seed)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the seed %s is private", seed)
	}
	w := start(t, nil, append([]string{"worker", "--nats", url, "--nats-creds", filepath.Join(dir, "nope.nk")}, natsSim...)...)
	assert.Equal(t, 2, w.wait(t, 30*time.Second), "an unreadable credential is bad usage: %s", w.stderr.String())

	setChildEnv(t, cluster.CredsEnv, "")
	for _, args := range [][]string{
		append([]string{"worker", "--nats", url}, natsSim...),
		{"hanoi", "--disks", "3", "--nats", url},
	} {
		c := start(t, nil, args...)
		assert.Equal(t, 1, c.wait(t, 30*time.Second), "%v", args)
		assert.Contains(t, c.stderr.String(), "refused no credentials", "%v", args)
		assert.Contains(t, c.stderr.String(), cluster.CredsEnv)
		assert.Contains(t, c.stderr.String(), cluster.TokenEnv)
	}

	// A worker signed in as a worker serves; one with the coordinator's
	// credential cannot take jobs (its consumer is refused).
	setChildEnv(t, cluster.CredsEnv, dir)
	bad := start(t, nil, append([]string{"worker", "--nats", url, "--nats-creds", cluster.SeedFile(dir, cluster.RoleCoordinator)}, natsSim...)...)
	assert.Equal(t, 1, bad.wait(t, time.Minute), "a coordinator cannot be a worker: %s", bad.stderr.String())

	// --auth token: the token without roles, and a wrong one's hint.
	setChildEnv(t, cluster.TokenEnv, "")
	c := start(t, nil, "nats", "--addr", "127.0.0.1:0", "--store", t.TempDir(), "--auth", "token")
	assert.Equal(t, 2, c.wait(t, 30*time.Second), "--auth token needs the token: %s", c.stderr.String())
	assert.Contains(t, c.stderr.String(), cluster.TokenEnv)
}

// TestBinaryNATSWrongToken: a server with --auth token and a client with
// another token: exit 1, and the hint names $MDAP_NATS_TOKEN.
func TestBinaryNATSWrongToken(t *testing.T) {
	t.Parallel()
	setChildEnv(t, cluster.TokenEnv, "right")
	out, err := os.Create(filepath.Join(t.TempDir(), "nats.out"))
	require.NoError(t, err)
	defer out.Close()
	srv := start(t, out, "nats", "--addr", "127.0.0.1:0", "--store", t.TempDir(), "--auth", "token")
	var url string
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(out.Name())
		url, _, _ = strings.Cut(string(b), "\n")
		return strings.HasPrefix(url, "nats://") && strings.Contains(string(b), "\n")
	}, 20*time.Second, 10*time.Millisecond)
	setChildEnv(t, cluster.CredsEnv, "")
	setChildEnv(t, cluster.TokenEnv, "wrong")
	c := start(t, nil, "hanoi", "--disks", "3", "--nats", url)
	assert.Equal(t, 1, c.wait(t, 30*time.Second))
	assert.Contains(t, c.stderr.String(), "$"+cluster.TokenEnv)
	assert.NotContains(t, c.stderr.String(), "start one with")
	setChildEnv(t, cluster.TokenEnv, "right")
	ls := start(t, nil, "nats", "ls", "--nats", url)
	assert.Equal(t, 0, ls.wait(t, 30*time.Second), "the right token gets in: %s", ls.stderr.String())
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, srv.wait(t, 30*time.Second))
	assert.Contains(t, srv.stderr.String(), "may do anything", "the token's weakness is said")
}

// TestBinaryNATSLsRm: maker nats ls lists a finished run's journal and
// the route of its worker; maker nats rm removes the journal (exit 0),
// refuses a journal in use (exit 1), and a name with nothing (exit 2).
func TestBinaryNATSLsRm(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	w := startWorker(t, url, "--inflight", "2")
	run := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--journal", "nats:lsrun", "--json", "--progress", "off", "--nats-keep", "2h"}, natsSim...)...)
	require.Equal(t, 0, run.wait(t, time.Minute), run.stderr.String())
	stopWorkers(t, w)

	js := connectRole(t, url, cluster.RoleCoordinator)
	busy, err := cluster.CreateJournal(context.Background(), js, "busy", cluster.JournalConfig{})
	require.NoError(t, err)
	defer busy.Close()

	ls := start(t, nil, "nats", "ls", "--nats", url, "--json")
	require.Equal(t, 0, ls.wait(t, 30*time.Second), ls.stderr.String())
	var list []cluster.Leftover
	require.NoError(t, json.Unmarshal(ls.stdout.Bytes(), &list), ls.stdout.String())
	kinds := map[string]cluster.Leftover{}
	for _, l := range list {
		kinds[l.Kind+" "+l.Name] = l
	}
	require.Contains(t, kinds, "journal lsrun")
	assert.Equal(t, 2*time.Hour, kinds["journal lsrun"].Retention, "--nats-keep")
	assert.Positive(t, kinds["journal lsrun"].Messages)
	assert.NotEmpty(t, kinds["journal busy"].Holder)
	table := start(t, nil, "nats", "ls", "--nats", url)
	require.Equal(t, 0, table.wait(t, 30*time.Second))
	assert.Regexp(t, `(?m)^journal\s+lsrun\s+\d+`, table.stdout.String())
	assert.Regexp(t, `(?m)^route\s+`, table.stdout.String())

	rm := start(t, nil, "nats", "rm", "lsrun", "--nats", url)
	require.Equal(t, 0, rm.wait(t, 30*time.Second), rm.stderr.String())
	assert.Equal(t, "removed journal lsrun\n", rm.stdout.String())
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"lsrun"}, 2, "nothing named"},
		{[]string{"a.b"}, 2, "run name"},
		{[]string{"busy"}, 1, "in progress"},
	} {
		rm := start(t, nil, append([]string{"nats", "rm", "--nats", url}, c.args...)...)
		assert.Equal(t, c.code, rm.wait(t, 30*time.Second), "%v: %s", c.args, rm.stderr.String())
		assert.Contains(t, rm.stderr.String(), c.want, c.args)
	}
	bad := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--nats-keep", "1s"}, natsSim...)...)
	assert.Equal(t, 2, bad.wait(t, 30*time.Second))
	setChildEnv(t, cluster.CredsEnv, "")
	anon := start(t, nil, "nats", "ls", "--nats", url)
	assert.Equal(t, 1, anon.wait(t, 30*time.Second), "no credentials, no listing")
}

// TestBinaryNATSNoWorkerFailsFast: a coordinator with no worker on its
// route ends with exit 1 naming the cause, long before --timeout.
func TestBinaryNATSNoWorkerFailsFast(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	began := time.Now()
	c := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--timeout", "10m", "--progress", "off"}, natsSim...)...)
	assert.Equal(t, 1, c.wait(t, 3*time.Minute), c.stderr.String())
	assert.Less(t, time.Since(began), 2*time.Minute, "not --timeout per sample")
	assert.Contains(t, c.stderr.String(), "no worker serves")
}

// TestBinaryNATSWithoutJetStream: a server without JetStream gets a
// message that says so, not "no responders".
func TestBinaryNATSWithoutJetStream(t *testing.T) {
	t.Parallel()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	ns.Start()
	defer ns.Shutdown()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	setChildEnv(t, cluster.CredsEnv, "")
	for _, args := range [][]string{
		append([]string{"hanoi", "--disks", "3", "--nats", ns.ClientURL()}, natsSim...),
		append([]string{"worker", "--nats", ns.ClientURL()}, natsSim...),
	} {
		c := start(t, nil, args...)
		assert.Equal(t, 1, c.wait(t, time.Minute), "%v", args)
		assert.Contains(t, c.stderr.String(), "no JetStream", "%v", args)
		assert.Contains(t, c.stderr.String(), "-js", "%v", args)
	}
}

// fileExists reports whether path names a regular file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
