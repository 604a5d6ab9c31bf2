package cluster

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/wait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/nats-io/nuid"
)

// The engine owns its shared resources: the sample streams (JobsStream,
// RepliesStream), the lease bucket and every consumer of the sample
// streams are created by the engine's privileged identity (Provision, and
// the agent of ServeAgent), never by a worker or a coordinator, whose
// roles have no right to create, update or delete them. A client that
// needs a consumer (a worker its route's, a coordinator its replies') asks
// the agent on mdap.engine.<kind>; the agent makes it with the engine's
// settings, whatever the client asked, so no client can bend a consumer
// or a stream (a RePublish of every job, a filter to nowhere, MaxDeliver
// 1).

// agentSubject prefixes the agent's request subjects:
// mdap.engine.route.<identity> (a worker's route consumer; the identity
// is its key, the only one its permissions allow, so the agent knows who
// asked: see ProvisionConfig.RouteQuota), mdap.engine.replies.<identity>
// (a Drawer's reply consumer, counted against its coordinator's
// DrawerQuota), mdap.engine.tasks.<queue> (a task queue's consumer on
// TasksStream; mdap.engine.tasks, naming the queue in the request only,
// is served too), and a run key's mdap.engine.journal.<run> (its journal
// stream and lease bucket) and mdap.engine.runtasks.<run> (its task
// stream, result bucket and queue consumer): see RunQueuePrefix. The
// shared coordinator's journals need nothing made: their subjects are in
// the provisioned JournalsStream.
const agentSubject = "mdap.engine."

// agentTimeout bounds one request to the agent, and the agent's work on it.
const agentTimeout = 10 * time.Second

// errNoAgent: nobody answers mdap.engine.* (a server without roles, or a
// stock server nobody provisions): the client creates what it needs
// itself, if its role lets it.
var errNoAgent = errors.New("no engine agent")

// ErrNotProvisioned: a stream or consumer the engine must provide is
// missing and this client may not create it. Run maker nats (it
// provisions at every start) or maker nats provision with the admin
// credential.
var ErrNotProvisioned = errors.New("not provisioned by the engine")

// ProvisionConfig is the engine's settings for what it provisions; the
// zero value is the defaults.
type ProvisionConfig struct {
	// Replicas of every stream and bucket the engine provisions (the
	// sample streams, the lease bucket, the shared streams of runs'
	// data: JournalsStream, TasksStream, ResultsBucket, and each run
	// key's streams and buckets), so that nothing
	// a run or a batch stores has fewer; 0 means 1 (a single server).
	// 1 to 5, and at most the cluster's JetStream nodes: Provision refuses
	// more (ErrConfig naming Replicas).
	Replicas int
	// DurableSamples keeps the sample streams on disk, so that they
	// survive a restart of the server (set it for a stock nats-server,
	// which nobody provisions again at its restart); otherwise they live
	// in memory and the engine provisions them again at every start.
	DurableSamples bool
	// SampleBytes bounds each sample stream (jobs, replies); 0 means 256
	// MiB. A full job stream refuses new jobs (their samples fail with
	// ErrEngine naming it); a full reply stream refuses new replies, and
	// the samples awaiting them fail with ErrEngine naming it once they
	// have waited DrawerConfig.NoWorker.
	SampleBytes int64
	// RunBytes bounds each shared stream of runs' data (JournalsStream,
	// TasksStream, ResultsBucket); 0 means DefaultRunBytes. A full one
	// refuses new messages (never drops old ones): a run fails at its
	// next journal line, or a task's publication fails, naming the stream
	// and that it is full.
	RunBytes int64
	// RunKeyBytes is the journal budget of each run key (RunRole): the
	// MaxBytes of its run's own journal stream (RunStream), holding its
	// run's journal and its batch's task journals, which no other key
	// shares; 0 means DefaultRunKeyBytes. A full one refuses that key's
	// next line (its run fails at its next step naming the budget), and
	// every other run's journal goes on. The agent makes the stream at the
	// key's first journal, and sets it to the budget in force at each
	// later one, and Provision sets every run stream to it. The key's
	// task stream and result bucket take an eighth of it each, its lease
	// bucket a thirty-second, each at least 16 KiB (see RunQueuePrefix;
	// a full one wraps ErrBudgetFull).
	RunKeyBytes int64 `flag:"run-key-bytes" usage:"the budget of each run key: its run's and its batch's journals, and an eighth of it each for its task queue and its results, a thirty-second for its leases (each its own, which no other key shares; JetStream reserves them on disk): a run key that fills one fails its own run, never another's; one run's own: maker nats run add RUN --bytes N"`
	// RunKeyBytesOf, if set, is the budget of one run (maker nats run add
	// RUN --bytes SIZE); a result of 0 means RunKeyBytes.
	RunKeyBytesOf func(run string) int64
	// RunLines bounds the lines of one journal (JournalsStream's messages
	// per subject); 0 means DefaultRunLines. A full journal refuses new
	// lines as a full stream does.
	RunLines int64
	// KeyJobs bounds the jobs one key may have queued on one route at
	// once (JobsStream's messages per subject); 0 means DefaultKeyJobs.
	// A publication past it is refused, whoever else queues. So that one
	// key's jobs over every route the engine may serve (MaxRoutes) stay
	// within half of JobsStream, the bound in force is fixed at Provision
	// to min(KeyJobs, SampleBytes / 2 / (MaxRoutes × JobBytes)): 32 at the
	// defaults (256 MiB, 16 routes, 256 KiB jobs). It never changes while
	// the engine runs, so no route added deletes a queued job. Settings
	// that leave less than one job are refused (ErrConfig naming
	// MaxRoutes).
	KeyJobs int64 `flag:"key-jobs" usage:"most jobs one key may have on one route at once, queued or being answered (the coordinators sharing a run key share them); the bound in force is fixed at start to min(key-jobs, the job stream's 256 MiB / 2 / (max-routes x job-bytes)), 32 at the defaults, so that one key's jobs over every route stay within half of the job stream"`
	// MaxRoutes is the most routes the engine serves at once (JobsStream's
	// route subjects); 0 means DefaultMaxRoutes, at most 1024. A route
	// past it is refused (ErrTooManyRoutes, naming maker nats
	// --max-routes), never served by lowering KeyJobs' bound.
	MaxRoutes int `flag:"max-routes" usage:"most routes (models) the engine serves at once, 1 to 1024: a route past it is refused; more routes leave one key fewer jobs a route (see --key-jobs)"`
	// JobBytes bounds one job (JobsStream's largest message); 0 means
	// DefaultJobBytes, at most MaxJobBytes. A larger job's samples fail
	// with ErrEngine naming it.
	JobBytes int32 `flag:"job-bytes" usage:"largest job in bytes (a sample's prompt, tools and settings), at most 1048576, NATS's largest message; a larger job's samples fail naming it"`
	// AckWait of every route's consumer; 0 means DefaultAckWait. Workers
	// report progress every third of it.
	AckWait time.Duration `flag:"ack-wait" usage:"how long a job of a dead worker waits before another worker takes it (every route's; workers report progress every third of it)"`
	// MaxDeliver of every route's consumer; 0 means DefaultMaxDeliver.
	MaxDeliver int `flag:"max-deliver" usage:"most deliveries of a job (a job that kept killing its workers is then left to expire); at least 2"`
	// RouteQuota bounds the routes one worker identity may make the
	// engine's agent serve: at most RouteQuota route consumers made at its
	// request exist at once, and its request for one more is refused,
	// naming the quota (a route whose consumer exists costs nothing). 0
	// means DefaultRouteQuota, or MaxRoutes if fewer; more than MaxRoutes
	// is refused. The agent knows who asked by the request's subject
	// (mdap.engine.route.<key>), which a worker's permissions allow for
	// its own key only, and records it on the consumer it makes (its
	// Metadata, addedByKey): the count is read from the server, so it
	// holds across restarts of the agent and over several agents. A
	// consumer left unused for DefaultConsumerInactive is removed, and no
	// longer counts. The admin's ProvisionRoute has no quota.
	RouteQuota int `flag:"route-quota" usage:"most routes one worker identity may make the engine serve (route consumers made at its request that are still in use; a route already served costs nothing), at most --max-routes: one worker credential cannot take every route; the count is kept on the server, so a restart does not reset it"`
	// MaxDrawers is the most coordinators' Drawers whose replies the
	// engine takes at once (RepliesStream's Drawer subjects, one per reply
	// consumer the agent made); 0 means DefaultMaxDrawers. A Drawer past
	// it is refused (its NewDrawer fails, ErrEngine naming MaxDrawers);
	// a Drawer closed makes room at once, one whose reply consumer is
	// gone otherwise (unused for an hour) once an agent found it absent
	// on two looks absentGap apart, its replies purged (replySpace). Two
	// agents adding a Drawer at once may admit one past it.
	MaxDrawers int `flag:"max-drawers" usage:"most Drawers (coordinator processes) the engine takes replies for at once, 1 to 4096: one more is refused, naming it; more Drawers leave one worker fewer replies a Drawer (see --reply-keep)"`
	// DrawerQuota bounds the Drawers one coordinator identity (a run key,
	// or the shared coordinator key) may make the engine's agent take
	// replies for: at most DrawerQuota reply consumers made at its request
	// exist at once, and its next Drawer is refused (ErrEngine naming the
	// quota), so that one coordinator credential cannot take every Drawer
	// (MaxDrawers). 0 means DefaultDrawerQuota, or MaxDrawers if fewer;
	// more than MaxDrawers is refused. It is counted as RouteQuota is: the
	// request's subject names the identity (mdap.engine.replies.<key>,
	// which a coordinator's permissions allow for its own key only), the
	// reply consumer records it (Metadata, addedByKey), and a consumer
	// gone (closed, or unused for an hour) no longer counts; the count is
	// read from the server, so no restart of the agent resets it. A reply
	// consumer made before the quota (naming no one) counts for the first
	// identity that asks for it, and those no identity adopted count
	// together as one: ServeAgent deletes those past one quota as it
	// starts (trimUnowned). A server without roles has no identities, and
	// no quota.
	DrawerQuota int `flag:"drawer-quota" usage:"most Drawers (coordinator processes) one coordinator identity (a run key, or the shared coordinator key) may have the engine take replies for at once, at most --max-drawers: one coordinator credential cannot take every Drawer; the count is kept on the server, so a restart does not reset it"`
	// DrawerEvery bounds how often one coordinator identity may have the
	// engine's agent make a new Drawer (a reply consumer made at its
	// request, each of which rewrites RepliesStream's subjects, as its
	// Close does): past a burst of DrawerQuota, one every DrawerEvery; a
	// request past it is refused, naming the rate and the wait, and the
	// Drawer (NewDrawer) waits that long and asks again, for up to 30 s.
	// A Drawer already served, or adopted, costs nothing. 0 means
	// DefaultDrawerEvery (1 s); use 1 ms to 1 h. The buckets are the
	// agent's memory: an agent starting again starts them full, and N
	// agents of one engine let an identity open up to N times as many.
	// A server without roles has no identities, and no rate.
	DrawerEvery time.Duration `flag:"drawer-every" usage:"how often one coordinator identity may have the engine make a new Drawer, past a burst of its --drawer-quota (1ms to 1h): each new Drawer and each close rewrites the reply stream's subjects, so one credential opening and closing Drawers in a loop cannot slow other runs; a coordinator asking faster waits its turn (up to 30s), a Drawer already served costs nothing"`
	// ReplyKeep bounds the replies one worker identity may have stored
	// for one Drawer (RepliesStream's messages per subject); 0 means
	// DefaultReplyKeep. So that one worker's replies over every Drawer
	// (MaxDrawers) stay within half of RepliesStream, the bound in force
	// is min(ReplyKeep, SampleBytes / 2 / (MaxDrawers × ReplyBytes)): 4 at
	// the defaults. Settings that leave less than one reply are refused
	// (ErrConfig naming MaxDrawers).
	ReplyKeep int64 `flag:"reply-keep" usage:"most replies one worker identity may have stored for one Drawer, not yet taken; the bound in force is fixed at start to min(reply-keep, the reply stream's 256 MiB / 2 / (max-drawers x reply-bytes)), 4 at the defaults, so that one worker's replies over every Drawer stay within half of the reply stream"`
	// ReplyBytes bounds one reply (RepliesStream's largest message); 0
	// means DefaultReplyBytes, at most MaxJobBytes (NATS's largest
	// message). A larger reply is refused, and its job handed back.
	ReplyBytes int32 `flag:"reply-bytes" usage:"largest reply in bytes, at most 1048576 (NATS's largest message); a larger reply fails its samples at once, naming its size"`
	// LeaseTTL of the lease bucket; 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Logger receives a line for each resource made or repaired (Info)
	// and each refused request (Warn); nil means none.
	Logger *slog.Logger
}

// MaxJobBytes is the largest ProvisionConfig.JobBytes: NATS's largest
// message (its default max_payload), past which a job could not be
// published at all.
const MaxJobBytes = 1 << 20

// Validate reports the first field out of range as a *fielderr.Error
// (maker.FieldError) wrapping ErrConfig, naming the field
// ("cluster.ProvisionConfig: AckWait = 100ms: use 1s to 1h"), so that a
// caller maps it back to its own setting. Zero is every field's default;
// a negative value, or one out of its range, is refused.
func (c ProvisionConfig) Validate() error {
	const cfg = "cluster.ProvisionConfig"
	switch {
	case c.Replicas < 0 || c.Replicas > 5:
		return fielderr.New(cfg, "Replicas", c.Replicas, "use 1 to 5 (the nodes of the cluster that keep a copy)")
	case c.AckWait < 0 || c.AckWait > 0 && (c.AckWait < time.Second || c.AckWait > time.Hour):
		return fielderr.New(cfg, "AckWait", c.AckWait, "use 1s to 1h")
	case c.MaxDeliver < 0 || c.MaxDeliver == 1:
		return fielderr.New(cfg, "MaxDeliver", c.MaxDeliver, "use at least 2 (a dead worker's jobs must come back)")
	case c.LeaseTTL < 0:
		return fielderr.New(cfg, "LeaseTTL", c.LeaseTTL, "use a positive duration")
	case c.RunBytes < 0:
		return fielderr.New(cfg, "RunBytes", c.RunBytes, "use a positive size")
	case c.RunKeyBytes < 0:
		return fielderr.New(cfg, "RunKeyBytes", c.RunKeyBytes, "use a positive size")
	case c.RunLines < 0:
		return fielderr.New(cfg, "RunLines", c.RunLines, "use a positive count")
	case c.SampleBytes < 0:
		return fielderr.New(cfg, "SampleBytes", c.SampleBytes, "use a positive size")
	case c.KeyJobs < 0:
		return fielderr.New(cfg, "KeyJobs", c.KeyJobs, "use a positive count")
	case c.JobBytes < 0:
		return fielderr.New(cfg, "JobBytes", c.JobBytes, "use a positive size")
	case c.JobBytes > MaxJobBytes:
		return fielderr.New(cfg, "JobBytes", c.JobBytes, fmt.Sprintf("use at most %d, NATS's largest message", MaxJobBytes))
	case c.MaxRoutes < 0 || c.MaxRoutes > maxRoutes:
		return fielderr.New(cfg, "MaxRoutes", c.MaxRoutes, fmt.Sprintf("use 1 to %d routes the engine serves at once", maxRoutes))
	case c.RouteQuota < 0 || c.RouteQuota > c.maxRoutes():
		return fielderr.New(cfg, "RouteQuota", c.RouteQuota, fmt.Sprintf("use 1 to %d routes a worker identity may add: at most the routes the engine serves (MaxRoutes, maker nats --max-routes)", c.maxRoutes()))
	case c.keyBound() < 1:
		return fielderr.New(cfg, "MaxRoutes", c.MaxRoutes, tooManyRoutes(c.maxRoutes(), c.sampleBytes(), c.jobBytes()))
	case c.MaxDrawers < 0 || c.MaxDrawers > maxDrawers:
		return fielderr.New(cfg, "MaxDrawers", c.MaxDrawers, fmt.Sprintf("use 1 to %d coordinators' Drawers the engine takes replies for at once", maxDrawers))
	case c.DrawerQuota < 0 || c.DrawerQuota > c.maxDrawers():
		return fielderr.New(cfg, "DrawerQuota", c.DrawerQuota, fmt.Sprintf("use 1 to %d Drawers a coordinator identity may have: at most the Drawers the engine takes replies for (MaxDrawers, maker nats --max-drawers)", c.maxDrawers()))
	case c.DrawerEvery < 0 || c.DrawerEvery > 0 && (c.DrawerEvery < time.Millisecond || c.DrawerEvery > time.Hour):
		return fielderr.New(cfg, "DrawerEvery", c.DrawerEvery, "use 1ms to 1h between two new Drawers of one coordinator identity")
	case c.ReplyKeep < 0:
		return fielderr.New(cfg, "ReplyKeep", c.ReplyKeep, "use a positive count")
	case c.ReplyBytes < 0 || c.ReplyBytes > MaxJobBytes:
		return fielderr.New(cfg, "ReplyBytes", c.ReplyBytes, fmt.Sprintf("use 1 to %d, NATS's largest message", MaxJobBytes))
	case c.replyBound() < 1:
		return fielderr.New(cfg, "MaxDrawers", c.MaxDrawers, fmt.Sprintf("%d Drawers would leave one worker less than one reply a Drawer: the engine keeps one worker's replies over every Drawer within half of %s (%d bytes / 2 / (%d Drawers × %d bytes a reply) < 1); take fewer Drawers (MaxDrawers), lower the largest reply (ReplyBytes), or give the reply stream more bytes (SampleBytes)",
			c.maxDrawers(), RepliesStream, c.sampleBytes(), c.maxDrawers(), c.replyBytes()))
	}
	return nil
}

// maxRoutes is MaxRoutes, or its default.
func (c ProvisionConfig) maxRoutes() int { return cmpOr(c.MaxRoutes, DefaultMaxRoutes) }

// routeQuota is RouteQuota, or its default (at most maxRoutes).
func (c ProvisionConfig) routeQuota() int {
	return cmpOr(c.RouteQuota, min(DefaultRouteQuota, c.maxRoutes()))
}

func (c ProvisionConfig) sampleBytes() int64 { return cmpOr(c.SampleBytes, sampleStreamBytes) }
func (c ProvisionConfig) jobBytes() int32    { return cmpOr(c.JobBytes, DefaultJobBytes) }

// keyBound is the jobs one key may have on each route (JobsStream's
// MaxMsgsPerSubject): see keyJobsBound.
func (c ProvisionConfig) keyBound() int64 {
	return keyJobsBound(cmpOr(c.KeyJobs, DefaultKeyJobs), c.sampleBytes(), c.jobBytes(), c.maxRoutes())
}

func (c ProvisionConfig) maxDrawers() int   { return cmpOr(c.MaxDrawers, DefaultMaxDrawers) }
func (c ProvisionConfig) replyBytes() int32 { return cmpOr(c.ReplyBytes, DefaultReplyBytes) }

// drawerQuota is DrawerQuota, or its default (at most maxDrawers).
func (c ProvisionConfig) drawerQuota() int {
	return cmpOr(c.DrawerQuota, min(DefaultDrawerQuota, c.maxDrawers()))
}

// drawerEvery is DrawerEvery, or its default.
func (c ProvisionConfig) drawerEvery() time.Duration {
	return cmpOr(c.DrawerEvery, DefaultDrawerEvery)
}

// replyBound is the replies one worker identity may have stored for each
// Drawer (RepliesStream's MaxMsgsPerSubject): ReplyKeep, or fewer, so
// that one worker's replies over MaxDrawers Drawers fit in half of the
// stream (keyJobsBound's rule, for replies).
func (c ProvisionConfig) replyBound() int64 {
	return keyJobsBound(cmpOr(c.ReplyKeep, DefaultReplyKeep), c.sampleBytes(), c.replyBytes(), c.maxDrawers())
}

func (c ProvisionConfig) check() error { return c.Validate() }

func (c ProvisionConfig) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Provision creates the engine's shared resources with mdap's settings
// and cfg.Replicas: JobsStream, RepliesStream, the lease bucket, and the
// shared streams of runs' data (JournalsStream, TasksStream,
// ResultsBucket), so that no client needs to create a stream. One that exists is set
// back to mdap's settings (a RePublish, a subject transform, a source or
// a mirror someone added is removed); one whose settings cannot be
// updated in place (its storage or retention) is deleted and made again,
// losing the jobs and replies in it (coordinators ask theirs again). js
// must sign in with the admin identity (RoleAdmin) on a server with roles.
// It is idempotent: call it at every start of the server, before clients
// use it. It first checks that js's connection, when it signed in with
// a role's key, is in EngineAccount (a stock server still configured by
// the authorization block of an mdap before the accounts is refused).
// Cost: a few JetStream API calls and one request to the server. Errors
// wrap ErrConfig, ErrOldAuthBlock or ErrEngine.
func Provision(ctx context.Context, js jetstream.JetStream, cfg ProvisionConfig) error {
	if err := cfg.check(); err != nil {
		return err
	}
	if err := checkEngineAccount(ctx, js.Conn()); err != nil {
		return err
	}
	log := cfg.logger()
	// The job stream's subjects are read and written back: one at a time
	// with a route being served (serveRouteSubject), or a route added
	// between the read and the write would be lost.
	routesMu.Lock()
	defer routesMu.Unlock()
	jobs, err := provisionedJobsConfig(ctx, js, cfg)
	if err != nil {
		return err
	}
	replies, err := provisionedRepliesConfig(ctx, js, cfg)
	if err != nil {
		return err
	}
	for _, want := range []jetstream.StreamConfig{jobs, replies} {
		if cfg.DurableSamples {
			want.Storage = jetstream.FileStorage
		}
		if cfg.SampleBytes > 0 {
			want.MaxBytes = cfg.SampleBytes
		}
		if err := provisionStream(ctx, js, want, log); err != nil {
			return err
		}
	}
	kv := leaseBucketConfig(cfg.Replicas, cmpOr(cfg.LeaseTTL, DefaultLeaseTTL))
	if _, err := js.CreateOrUpdateKeyValue(ctx, kv); err != nil {
		return provisionErr("the lease bucket", cfg.Replicas, err)
	}
	if err := provisionRunStreams(ctx, js, cfg); err != nil {
		return err
	}
	// The run keys' journal streams and lease buckets, task streams and
	// result buckets, made by the agent, to the budgets and replicas in
	// force.
	names := js.StreamNames(ctx, jetstream.WithStreamListSubject(runSubject+">"))
	var journals, queues []string
	for n := range names.Name() {
		if run, ok := strings.CutPrefix(n, RunStreamPrefix); ok {
			journals = append(journals, run)
		}
		if run, ok := strings.CutPrefix(n, RunQueuePrefix); ok {
			queues = append(queues, run)
		}
	}
	if err := names.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return provisionErr("the run keys' streams", cfg.Replicas, err)
	}
	for _, run := range journals {
		if err := provisionRunJournals(ctx, js, run, cfg); err != nil {
			return err
		}
	}
	for _, run := range queues {
		if err := provisionRunQueue(ctx, js, run, cfg); err != nil {
			return err
		}
	}
	return nil
}

// provisionStream makes the stream named want.Name have want's settings.
func provisionStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig, log *slog.Logger) error {
	_, err := js.Stream(ctx, want.Name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		if _, err = js.CreateStream(ctx, want); err == nil {
			log.Info("provisioned", "stream", want.Name)
			return nil
		}
	case err == nil:
		if _, err = js.UpdateStream(ctx, want); err == nil {
			return nil
		}
		log.Warn("stream settings not updatable: made again", "stream", want.Name, "err", err)
		if err = js.DeleteStream(ctx, want.Name); err == nil || errors.Is(err, jetstream.ErrStreamNotFound) {
			_, err = js.CreateStream(ctx, want)
		}
	}
	if err != nil {
		return provisionErr("stream "+want.Name, want.Replicas, err)
	}
	return nil
}

// noRoute is the subject JobsStream takes when the engine serves no route
// yet (a stream needs one): no route token is "_", and no client may
// publish on it.
const noRoute = jobsSubject + "_"

// maxRoutes is the largest ProvisionConfig.MaxRoutes.
const maxRoutes = 1024

// DefaultMaxRoutes is the routes the engine serves at once when
// ProvisionConfig.MaxRoutes is 0 (maker nats --max-routes).
const DefaultMaxRoutes = 16

// DefaultRouteQuota is how many routes one worker identity may make the
// engine serve when ProvisionConfig.RouteQuota is 0: more than a worker
// serves (one model each), a quarter of DefaultMaxRoutes, so that one
// worker credential cannot take every route the engine serves.
const DefaultRouteQuota = 4

// addedByKey is the Metadata key of a route consumer made at a worker
// identity's request: its value is that identity's key, counted against
// its RouteQuota.
const addedByKey = "mdap.added-by"

// provisionedJobsConfig is JobsStream as the engine provisions it: with
// cfg's bounds, on the subjects of the routes served now (those with a
// consumer: a route whose consumer was removed, unused, is dropped), so
// that a job on a route nobody serves is refused (no stream takes it),
// and with the per-key bound of cfg.MaxRoutes routes (keyBound), fixed
// until the engine provisions again. More routes served than MaxRoutes
// (a stream served with a larger MaxRoutes) are refused, ErrConfig naming
// --max-routes.
func provisionedJobsConfig(ctx context.Context, js jetstream.JetStream, cfg ProvisionConfig) (jetstream.StreamConfig, error) {
	want := jobsStreamConfig(cfg.Replicas)
	want.MaxBytes = cfg.sampleBytes()
	want.MaxMsgSize = cfg.jobBytes()
	subjects := []string{noRoute}
	st, err := js.Stream(ctx, JobsStream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
	case err != nil:
		return want, provisionErr("stream "+JobsStream, cfg.Replicas, err)
	default:
		cl := st.ListConsumers(ctx)
		for ci := range cl.Info() {
			if token, ok := strings.CutPrefix(ci.Name, "w-"); ok && isRouteJobs(routeJobs(token)) {
				subjects = append(subjects, routeJobs(token))
			}
		}
		if err := cl.Err(); err != nil {
			return want, provisionErr("the routes of "+JobsStream, cfg.Replicas, err)
		}
	}
	slices.Sort(subjects)
	want.Subjects = slices.Compact(subjects)
	routes := len(want.Subjects) - 1 // noRoute is no route
	if routes > cfg.maxRoutes() {
		return want, fmt.Errorf("%w: the engine serves %d routes (their consumers in use), more than its most, %d (maker nats --max-routes, ProvisionConfig.MaxRoutes): raise it, or let unused routes go (a route's consumer left unused for %s is removed)", ErrTooManyRoutes, routes, cfg.maxRoutes(), DefaultConsumerInactive)
	}
	want.MaxMsgsPerSubject = cfg.keyBound()
	return want, nil
}

// keyJobsBound is the most jobs one key may have on each route when at
// most routes routes are served: keyJobs, or fewer, so that one key's jobs
// over every route fit in half of a job stream of maxBytes whose jobs are
// at most jobBytes each: maxBytes / 2 / (routes × jobBytes). Below 1 when
// not one job a route fits.
func keyJobsBound(keyJobs, maxBytes int64, jobBytes int32, routes int) int64 {
	if routes < 1 || maxBytes <= 0 || jobBytes <= 0 {
		return keyJobs
	}
	return min(keyJobs, maxBytes/2/(int64(routes)*int64(jobBytes)))
}

// tooManyRoutes says why routes routes cannot be served by a job stream of
// maxBytes with jobs of at most jobBytes, and how to fix the settings.
func tooManyRoutes(routes int, maxBytes int64, jobBytes int32) string {
	return fmt.Sprintf("serving %d routes would leave one key less than one job a route: the engine keeps one key's jobs over every route within half of %s (%d bytes / 2 / (%d routes × %d bytes a job) < 1); serve fewer routes (maker nats --max-routes, ProvisionConfig.MaxRoutes), lower the largest job (--job-bytes, ProvisionConfig.JobBytes), or give the job stream more bytes (ProvisionConfig.SampleBytes)",
		routes, JobsStream, maxBytes, routes, jobBytes)
}

// ErrTooManyRoutes: the engine refused to serve a new route, since it
// serves its most routes (ProvisionConfig.MaxRoutes), or a worker
// identity's request for one was past its quota (RouteQuota). It wraps
// ErrConfig.
var ErrTooManyRoutes = fmt.Errorf("%w: too many routes", ErrConfig)

// isRouteJobs reports whether subj is the subject of one route's jobs,
// mdap.jobs.<token>.*, with a token RouteToken could make.
func isRouteJobs(subj string) bool {
	token, ok := strings.CutPrefix(subj, jobsSubject)
	if !ok {
		return false
	}
	if token, ok = strings.CutSuffix(token, ".*"); !ok {
		return false
	}
	return oneToken(token)
}

// routesMu serializes this process's changes of JobsStream's subjects
// (each a read, then an update) and of its route consumers: a route's
// addition and Provision.
var routesMu sync.Mutex

// serveRouteSubject makes JobsStream take the jobs of route token, at
// most most routes (see serveRouteSubjectLocked).
func serveRouteSubject(ctx context.Context, js jetstream.JetStream, token string, most int) error {
	routesMu.Lock()
	defer routesMu.Unlock()
	return serveRouteSubjectLocked(ctx, js, token, most)
}

// serveRouteSubjectLocked is serveRouteSubject with routesMu held. It
// adds the route's subject to JobsStream and changes nothing else: the
// per-key bound set at Provision stays, so no queued job is deleted. It
// serves at most most routes, and no more than the stream's own bounds
// allow one key's jobs over every route within half of it
// (streamRoutes), so that a caller's settings cannot break that. Errors
// wrap ErrTooManyRoutes when the route cannot be added.
func serveRouteSubjectLocked(ctx context.Context, js jetstream.JetStream, token string, most int) error {
	st, err := js.Stream(ctx, JobsStream)
	if err != nil {
		return err
	}
	c := st.CachedInfo().Config
	subj := routeJobs(token)
	if slices.Contains(c.Subjects, subj) || slices.Contains(c.Subjects, jobsSubject+">") {
		return nil
	}
	most = min(most, streamRoutes(c))
	if countRoutes(c.Subjects) >= most {
		// Routes whose consumer was removed (left unused) make room, so
		// that routes nobody serves cannot hold the engine's most until it
		// provisions again.
		inUse, err := routesInUse(ctx, st)
		if err != nil {
			return err
		}
		c.Subjects = slices.DeleteFunc(c.Subjects, func(subj string) bool { return isRouteJobs(subj) && !inUse[subj] })
	}
	if served := countRoutes(c.Subjects); served >= most {
		return fmt.Errorf("%w: the engine serves %d routes, its most (maker nats --max-routes, ProvisionConfig.MaxRoutes; maker nats provision --max-routes for a stock server): raise it and provision again, or let unused routes go (a route's consumer left unused for %s is removed, and its route with it when a new one is asked for)", ErrTooManyRoutes, served, DefaultConsumerInactive)
	}
	c.Subjects = append(c.Subjects, subj)
	_, err = js.UpdateStream(ctx, c)
	return err
}

// streamRoutes is the most routes job stream c may serve with one key's
// jobs over every route within half of it: MaxBytes / 2 /
// (MaxMsgsPerSubject × MaxMsgSize); 0 for a stream without those bounds
// (not provisioned by the engine).
func streamRoutes(c jetstream.StreamConfig) int {
	if c.MaxBytes <= 0 || c.MaxMsgsPerSubject <= 0 || c.MaxMsgSize <= 0 {
		return 0
	}
	return int(min(c.MaxBytes/2/(c.MaxMsgsPerSubject*int64(c.MaxMsgSize)), maxRoutes))
}

// routesInUse is the job subjects of the routes of job stream st that
// have their workers' consumer.
func routesInUse(ctx context.Context, st jetstream.Stream) (map[string]bool, error) {
	inUse := map[string]bool{}
	cl := st.ConsumerNames(ctx)
	for name := range cl.Name() {
		if token, ok := strings.CutPrefix(name, "w-"); ok {
			inUse[routeJobs(token)] = true
		}
	}
	return inUse, cl.Err()
}

// countRoutes is how many of subjects are routes' job subjects.
func countRoutes(subjects []string) int {
	n := 0
	for _, subj := range subjects {
		if isRouteJobs(subj) {
			n++
		}
	}
	return n
}

// routeConsumerConfig is the consumer of route token's workers, with the
// engine's settings.
func routeConsumerConfig(token, route string, ackWait time.Duration, maxDeliver int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       workerConsumer(token),
		Description:   "mdap workers of " + truncate(route, 200),
		FilterSubject: routeJobs(token),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cmpOr(ackWait, DefaultAckWait),
		MaxDeliver:    cmpOr(maxDeliver, DefaultMaxDeliver),
		MaxAckPending: -1,
		// A route nobody serves any more leaves no consumer behind.
		InactiveThreshold: DefaultConsumerInactive,
	}
}

// ProvisionRoute makes JobsStream take route's jobs, while it serves fewer
// than cfg.MaxRoutes routes: a route past them is refused
// (ErrTooManyRoutes, naming --max-routes). It changes no bound: the jobs
// one key may have on each route were fixed at Provision for MaxRoutes
// routes, so no queued job is ever deleted to make room. It creates the
// consumer of route's workers on it with the engine's AckWait and
// MaxDeliver, or sets an existing one back to them (keeping the identity
// that asked for it first). Workers ask the agent for it (ServeAgent),
// under their RouteQuota; call it for a stock server that runs no agent
// (no quota). Errors wrap ErrConfig (ErrTooManyRoutes among them) or
// ErrEngine.
func ProvisionRoute(ctx context.Context, js jetstream.JetStream, route string, cfg ProvisionConfig) error {
	return provisionRoute(ctx, js, route, cfg, "")
}

// provisionRoute is ProvisionRoute at the request of the worker identity
// by ("": the admin, no quota): a route consumer not made yet is made
// only while fewer than cfg's RouteQuota consumers made at by's request
// exist, and records by (addedByKey).
func provisionRoute(ctx context.Context, js jetstream.JetStream, route string, cfg ProvisionConfig, by string) error {
	if err := cfg.check(); err != nil {
		return err
	}
	if route == "" {
		return fmt.Errorf("%w: empty route", ErrConfig)
	}
	token := RouteToken(route)
	// The subject and then its consumer (whose filter must be a subject
	// of the stream), with no Provision between them: it rebuilds the
	// subjects from the consumers, and would drop one whose consumer it
	// did not see yet.
	routesMu.Lock()
	defer routesMu.Unlock()
	want := routeConsumerConfig(token, route, cfg.AckWait, cfg.MaxDeliver)
	cons, err := js.Consumer(ctx, JobsStream, want.Durable)
	switch {
	case err == nil:
		if who := cons.CachedInfo().Config.Metadata[addedByKey]; who != "" {
			want.Metadata = map[string]string{addedByKey: who}
		}
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		if by != "" {
			if err := checkRouteQuota(ctx, js, by, cfg.routeQuota()); err != nil {
				return fmt.Errorf("serve the jobs of route %q: %w", route, err)
			}
			want.Metadata = map[string]string{addedByKey: by}
		}
	default:
		return fmt.Errorf("%w: the consumer of route %q: %w", ErrEngine, route, err)
	}
	err = serveRouteSubjectLocked(ctx, js, token, cfg.maxRoutes())
	if errors.Is(err, ErrTooManyRoutes) {
		return fmt.Errorf("serve the jobs of route %q: %w", route, err)
	}
	if err != nil {
		return fmt.Errorf("%w: serve the jobs of route %q: %w", ErrEngine, route, err)
	}
	if _, err = js.CreateOrUpdateConsumer(ctx, JobsStream, want); err != nil {
		return fmt.Errorf("%w: provision the consumer of route %q: %w", ErrEngine, route, err)
	}
	return nil
}

// checkRouteQuota refuses, wrapping ErrTooManyRoutes, a new route consumer
// for the worker identity by once most route consumers made at its
// request exist (see countAddedBy).
func checkRouteQuota(ctx context.Context, js jetstream.JetStream, by string, most int) error {
	n, err := countAddedBy(ctx, js, JobsStream, by)
	if err != nil {
		return err
	}
	if n >= most {
		return fmt.Errorf("%w: worker identity %s has made the engine serve %d routes, its quota (maker nats --route-quota, ProvisionConfig.RouteQuota): a route whose consumer exists costs nothing; one it added is freed once its consumer is left unused for %s",
			ErrTooManyRoutes, truncate(by, 12), n, DefaultConsumerInactive)
	}
	return nil
}

// countAddedBy is how many consumers of stream were made at the request
// of the identity by (their Metadata names it, addedByKey). The count is
// read from the server, so no agent's restart and no second agent resets
// a quota kept with it.
func countAddedBy(ctx context.Context, js jetstream.JetStream, stream, by string) (int, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	n := 0
	cl := st.ListConsumers(ctx)
	for ci := range cl.Info() {
		if ci.Config.Metadata[addedByKey] == by {
			n++
		}
	}
	if err := cl.Err(); err != nil {
		return 0, fmt.Errorf("%w: the consumers of %s: %w", ErrEngine, stream, err)
	}
	return n, nil
}

// replyConsumerConfig is the reply consumer of the Drawer id.
// Its filter names the Drawer's token (replyToken), never its name.
func replyConsumerConfig(id string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Name:              id,
		Description:       "mdap replies to one coordinator",
		FilterSubject:     repliesSubject + replyToken(id) + ".>",
		AckPolicy:         jetstream.AckExplicitPolicy,
		AckWait:           30 * time.Second,
		InactiveThreshold: time.Hour,
	}
}

// agentRequest is a client's request to the agent; agentResponse its
// answer.
type agentRequest struct {
	// Route: the route whose consumer a worker needs (mdap.engine.route).
	Route string `json:"route,omitempty"`
	// Name: the reply consumer a Drawer needs (mdap.engine.replies): d
	// and letters or digits; the task queue whose consumer a coordinator
	// needs (mdap.engine.tasks).
	Name string `json:"name,omitempty"`
	// Drop: the Drawer Name closes; its reply consumer is deleted and its
	// subject removed (mdap.engine.replies). Only the engine deletes a
	// reply consumer: knowing its name is the proof of owning it.
	Drop bool `json:"drop,omitempty"`
	// MaxAge: the retention of a task queue (checked, 1m to
	// MaxRetention).
	MaxAge time.Duration `json:"max_age,omitempty"`
	// AckWait: a task queue consumer's ack wait.
	AckWait time.Duration `json:"ack_wait,omitempty"`
	// Seq and Lease: the job a Drawer withdraws (mdap.engine.withdraw):
	// its sequence in JobsStream and its lease key, the proof that the
	// Drawer published it; Name is its id.
	Seq   uint64 `json:"seq,omitempty"`
	Lease string `json:"lease,omitempty"`
}

// errJobGone: the job to withdraw is no longer queued (taken, or
// withdrawn).
const errJobGone = "the job is no longer queued"

// withdrawJob deletes the queued job at req.Seq if it is the job req.Name
// with the lease req.Lease.
func withdrawJob(ctx context.Context, js jetstream.JetStream, req agentRequest) error {
	if req.Seq == 0 || req.Name == "" || req.Lease == "" {
		return errors.New("a withdrawal names a job's sequence, id and lease")
	}
	st, err := js.Stream(ctx, JobsStream)
	if err != nil {
		return err
	}
	msg, err := st.GetMsg(ctx, req.Seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return errors.New(errJobGone)
	}
	if err != nil {
		return err
	}
	job, err := decodeJob(msg.Data)
	if err != nil || job.ID != req.Name || subtle.ConstantTimeCompare([]byte(job.Lease), []byte(req.Lease)) != 1 {
		return errors.New("not the job named, or not its lease: only its coordinator may withdraw a job")
	}
	if err := st.DeleteMsg(ctx, req.Seq); errors.Is(err, jetstream.ErrMsgNotFound) {
		return errors.New(errJobGone)
	} else if err != nil {
		return err
	}
	return nil
}

type agentResponse struct {
	Error string `json:"error,omitempty"`
	// Workers answers mdap.engine.workers: the distinct worker
	// identities pulling the route's jobs (see Drawer.Workers).
	Workers int `json:"workers,omitempty"`
	// RetryIn: with Error, a refusal that passes after this long (the
	// rate of new Drawers: retryLater).
	RetryIn time.Duration `json:"retry_in,omitempty"`
	// Busy: with Error and RetryIn, the request was not served: its
	// lane was full (agentlanes.go), or JetStream served nothing
	// (unserved); askAgent asks again.
	Busy bool `json:"busy,omitempty"`
}

// Agent answers clients' requests for the consumers they need (see
// ServeAgent).
type Agent struct {
	nc        *nats.Conn
	js        jetstream.JetStream
	cfg       ProvisionConfig
	log       *slog.Logger
	sub       *nats.Subscription
	peers     *nats.Subscription // acts relayed by other agents (peerSubject)
	news      *nats.Subscription // other agents' news (newsSubject)
	relays    *nats.Subscription // pulls other agents hand on to this one (relaySubject)
	id        string             // this agent among the engine's (peerAct)
	wg        sync.WaitGroup
	ctx       context.Context // ends at Stop
	cancel    context.CancelFunc
	mu        sync.Mutex
	stopped   bool // Stop has begun: no new goroutine
	work      deliveries
	rooms     rooms          // the jobs each worker identity may hold (heldroom.go)
	slots     chan struct{}  // workers' requests in progress
	pulls     pullers        // who pulls which route
	asked     agentCounts    // requests answered (Server.Stats)
	replies   replySpace     // RepliesStream's Drawer subjects
	rates     drawerRates    // each identity's new Drawers
	drawers   drawerCache    // the Drawers jobs may be delivered for
	lanes     lanes          // requests other than workers' pulls, by requester
	working   map[string]int // workers' requests in progress, by identity key (under mu)
	handoffs  handoffs       // jobs handed back with a delay, kept for other workers (handoff.go)
	peerKeeps peerKeeps      // the jobs other agents keep so (handoffpeers.go)
}

// maxWorkRequests bounds the workers' requests the agent serves at once;
// past it a pull is answered with no job.
const maxWorkRequests = 4096

// maxWorkPerKey bounds one worker identity's requests served at once, an
// eighth of maxWorkRequests: a worker pulls once at a time and
// acknowledges its jobs as their calls end, so even machines sharing one
// key stay far below it, while one credential keeping a minute's pulls
// waiting on every route it can name no longer takes every place
// (review12: the honest worker was answered busy and served nothing).
const maxWorkPerKey = maxWorkRequests / 8

// ServeAgent answers, on nc (signed in with the admin identity),
// workers' requests for their route's consumer (mdap.engine.route), their
// pulls and their acts on the jobs delivered to them
// (mdap.engine.work.<identity>.>, each act refused unless the job was
// delivered to that identity), coordinators' requests for their reply
// consumer and task queue's consumer, making each with the engine's
// settings in cfg, and their withdrawals of queued jobs (mdap.engine.withdraw,
// each done only for the holder of the job's lease); and provisions the shared
// resources again (Provision) after every reconnection, since a restarted
// server may have lost them. As it starts, it deletes the reply consumers
// made before the Drawer quota past one quota (see DrawerQuota).
// Several agents may serve one engine: they share a queue group, and a
// worker's act reaching an agent that did not make its delivery is done
// by the one that did (see peerSubject), at a cost of up to peerWait for
// a delivery none holds. It returns once the server has its subscription,
// so a client that asks after it returned is answered. Stop it with
// Agent.Stop. Like Provision it refuses a connection signed in with a
// role's key outside EngineAccount (ErrOldAuthBlock). Errors wrap
// ErrConfig, ErrOldAuthBlock or ErrEngine (the subscription failed, or
// the server did not confirm it within ctx and 10 s).
func ServeAgent(ctx context.Context, nc *nats.Conn, cfg ProvisionConfig) (*Agent, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := checkEngineAccount(ctx, nc); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	log := cfg.logger()
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &Agent{nc: nc, js: js, cfg: cfg, log: log, ctx: actx, cancel: cancel, work: deliveries{held: map[string]*held{}}, rooms: rooms{ackWait: cfg.AckWait, cuts: connectionCuts(nc), log: log}, replies: replySpace{soon: make(chan struct{}, 1)}, slots: make(chan struct{}, maxWorkRequests), id: nuid.Next()}
	a.lanes = lanes{serve: a.answer, wg: &a.wg}
	if n, err := trimUnowned(ctx, js, cfg.drawerQuota()); err != nil {
		log.Warn("the reply consumers made before the Drawer quota", "err", err)
	} else if n > 0 {
		log.Info("deleted reply consumers made before the Drawer quota, past one quota", "deleted", n)
	}
	a.sub, err = nc.QueueSubscribe(agentSubject+">", "mdap-engine", a.handle)
	if err == nil {
		if a.peers, err = nc.Subscribe(peerSubject, a.onPeer); err != nil {
			_ = a.sub.Unsubscribe()
		} else if a.news, err = nc.Subscribe(newsSubject, a.onNews); err != nil {
			_ = a.sub.Unsubscribe()
			_ = a.peers.Unsubscribe()
		} else if a.relays, err = nc.Subscribe(relaySubject+a.id, a.onRelayedPull); err != nil {
			_ = a.sub.Unsubscribe()
			_ = a.peers.Unsubscribe()
			_ = a.news.Unsubscribe()
		}
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w: serve the engine's requests: %w", ErrEngine, err)
	}
	// Until the server has the subscription, a client asking is told
	// nobody serves (errNoAgent) and falls back to making its consumer
	// itself, which its role forbids: return only once it has it.
	fctx, fcancel := context.WithTimeout(ctx, agentTimeout)
	defer fcancel()
	if err := nc.FlushWithContext(fctx); err != nil {
		_ = a.sub.Unsubscribe()
		_ = a.peers.Unsubscribe()
		_ = a.news.Unsubscribe()
		_ = a.relays.Unsubscribe()
		cancel()
		return nil, fmt.Errorf("%w: serve the engine's requests: %w", ErrEngine, err)
	}
	a.wg.Go(func() { a.keepHandoffs(actx.Done()) })
	// Keep RepliesStream's subjects those of the live Drawers: put back
	// one a concurrent write dropped, remove one whose consumer is gone.
	a.wg.Go(func() {
		t := time.NewTicker(replyReconcile)
		defer t.Stop()
		var last time.Time
		for {
			select {
			case <-actx.Done():
				return
			case <-t.C:
			case <-a.replies.soon:
				// At most one asked-for reconcile a goneEvery: workers'
				// asks cost the stream's look no more often.
				if wait.Sleep(actx, goneEvery-time.Since(last)) != nil {
					return
				}
			}
			rctx, rcancel := context.WithTimeout(actx, agentTimeout)
			if _, err := a.replies.reconcile(rctx, js, ""); err != nil && actx.Err() == nil {
				log.Debug("reconcile the reply stream's subjects; trying again", "err", err)
			}
			rcancel()
			last = time.Now()
		}
	})
	// Provision again after a reconnection: a restarted server lost the
	// sample streams if they live in memory.
	a.wg.Go(func() {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		seen := nc.Stats().Reconnects
		for {
			select {
			case <-actx.Done():
				return
			case <-t.C:
			}
			a.forget(2*cmpOr(cfg.AckWait, DefaultAckWait) + time.Minute)
			if n := nc.Stats().Reconnects; n != seen && nc.IsConnected() {
				pctx, pcancel := context.WithTimeout(actx, agentTimeout)
				err := Provision(pctx, js, cfg)
				pcancel()
				if err != nil {
					log.Warn("provision after a reconnection; trying again", "err", err)
					continue
				}
				seen = n
			}
		}
	})
	return a, nil
}

// handle answers one request: a worker's on a goroutine of its own
// (bounded by slots), a count of workers at once (from memory), any
// other in its lane (agentlanes.go). It never waits on JetStream, so no
// request waits behind another's. A request whose answer would go
// anywhere but an inbox is dropped unanswered (answerable).
func (a *Agent) handle(m *nats.Msg) {
	if !answerable(m.Reply) {
		a.asked.count(true)
		a.log.Debug("a request whose answer would go elsewhere than an inbox: dropped", "subject", m.Subject, "reply", m.Reply)
		return
	}
	if strings.HasPrefix(m.Subject, workSubject) {
		reason := a.startWork(m, false)
		a.asked.count(reason != "")
		if reason != "" {
			endPull(a.nc, m.Reply, reason)
		}
		return
	}
	if kind, _, _ := strings.Cut(strings.TrimPrefix(m.Subject, agentSubject), "."); kind == "workers" {
		// Counted in memory, as cheap as queueing it.
		a.asked.count(false)
		a.serveWorkers(m)
		return
	}
	a.mu.Lock()
	refusal := "the engine is stopping"
	if !a.stopped {
		refusal = a.lanes.add(m)
	}
	a.mu.Unlock()
	if refusal != "" {
		a.asked.count(true)
		refuseBusy(m, refusal)
	}
}

// startWork serves the worker's request m (a pull or an act) on a
// goroutine of its own, relayed when another agent handed the pull on
// (handoffpeers.go); it returns why it did not: the engine is stopping,
// or busy (maxWorkRequests, or the identity's maxWorkPerKey).
func (a *Agent) startWork(m *nats.Msg, relayed bool) (reason string) {
	// Under mu, so no goroutine starts once Stop has begun to wait:
	// Unsubscribe does not wait for a callback under way.
	key := identityKey(strings.TrimPrefix(m.Subject, workSubject))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return "the engine is stopping"
	}
	if a.working[key] >= maxWorkPerKey {
		return "the engine is busy"
	}
	select {
	case a.slots <- struct{}{}:
	default:
		return "the engine is busy"
	}
	if a.working == nil {
		a.working = map[string]int{}
	}
	a.working[key]++
	a.wg.Go(func() {
		defer func() {
			a.mu.Lock()
			if a.working[key]--; a.working[key] == 0 {
				delete(a.working, key)
			}
			a.mu.Unlock()
			<-a.slots
		}()
		a.serveWork(a.ctx, a.js, m, relayed)
	})
	return ""
}

// answerable reports whether the agent may publish on reply, the reply
// subject a request names: only under a client's inbox (_INBOX., or
// _INBOX_<key>. on a stock server with an older authorization block), or
// the server's subject of an answer through a service import (_R_., on a
// server with roles, whose clients' account it reaches: accounts.go).
// NATS checks no one's right to the reply subject it names, and the agent
// publishes with the admin's rights: an answer sent on to
// $JS.API.STREAM.DELETE.<stream> ("{}" is an empty request there) deleted
// that stream at a worker's asking, and one sent to a stream's subject
// would be stored there as the engine's (review11).
func answerable(reply string) bool {
	if rest, ok := strings.CutPrefix(reply, "_R_."); ok {
		// The server's subject of an answer through a service import (a
		// client of the clients' account: accounts.go), which it delivers
		// to the reply subject the client named, in the clients' account.
		return rest != ""
	}
	rest, ok := strings.CutPrefix(reply, "_INBOX")
	if !ok {
		return false
	}
	if key, ok := strings.CutPrefix(rest, "_"); ok {
		k, tail, ok := strings.Cut(key, ".")
		return ok && k != "" && tail != ""
	}
	return strings.HasPrefix(rest, ".") && len(rest) > 1
}

// answer serves one request of a lane (agentlanes.go).
func (a *Agent) answer(m *nats.Msg) {
	rctx, rcancel := context.WithTimeout(a.ctx, agentTimeout)
	defer rcancel()
	err := serveRequest(rctx, a.js, m, a.cfg, &a.replies, &a.rates)
	if kind, _, _ := strings.Cut(strings.TrimPrefix(m.Subject, agentSubject), "."); err == nil && kind == "withdraw" {
		// Its coordinator's: a worker holding it through this agent has
		// an ack wait to drop it (heldroom.go).
		var req agentRequest
		if json.Unmarshal(m.Data, &req) == nil {
			a.rooms.withdrawn(req.Seq, time.Now())
			a.handoffs.drop(req.Seq)
			a.tell(peerNews{Withdrawn: req.Seq})
		}
	}
	var resp agentResponse
	a.asked.count(err != nil)
	if later := (*retryLater)(nil); errors.As(err, &later) {
		resp.RetryIn = later.wait
	}
	if unserved(err) {
		// JetStream did nothing (a cluster electing its leaders): the
		// client asks again, as when the lane is full.
		resp.RetryIn, resp.Busy = leaderRetryWait, true
	}
	if err != nil {
		if err.Error() != errJobGone { // a job taken before its withdrawal: no news
			a.log.Warn("engine request refused", "subject", m.Subject, "err", err)
		}
		resp.Error = err.Error()
	}
	data, _ := json.Marshal(resp)
	_ = m.Respond(data)
}

// unserved reports whether err is JetStream's refusal to serve at all
// (503, "JetStream system temporarily unavailable": a cluster without a
// leader for the moment; CI's batch coordinator, started as a stopped
// node came back, failed on it), which passes. The call refused did
// nothing; an earlier call of the same request may have, and the
// agent's requests are made to be asked again (a consumer, a stream or
// a subject that is there already is kept).
func unserved(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.Code == 503
}

// Stop stops answering requests; it is safe to call more than once.
func (a *Agent) Stop() {
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
	a.cancel()
	_ = a.sub.Unsubscribe()
	_ = a.peers.Unsubscribe()
	_ = a.news.Unsubscribe()
	_ = a.relays.Unsubscribe()
	a.wg.Wait()
}

func serveRequest(ctx context.Context, js jetstream.JetStream, m *nats.Msg, cfg ProvisionConfig, space *replySpace, rates *drawerRates) error {
	var req agentRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		return fmt.Errorf("undecodable request: %w", err)
	}
	// A task queue's request names its queue in the subject too
	// (mdap.engine.tasks.<queue>), the only one a run's coordinator
	// may ask for (RunRole); the subject's name is the one served. A
	// route's request names its worker's key (mdap.engine.route.<key>),
	// the only one the worker's permissions allow.
	kind, named, scoped := strings.Cut(strings.TrimPrefix(m.Subject, agentSubject), ".")
	switch {
	case scoped && kind == "tasks":
		if req.Name != "" && req.Name != named {
			return fmt.Errorf("the request names %q, its subject %q", req.Name, named)
		}
		req.Name = named
	case scoped && (kind == "journal" || kind == "runtasks"):
		req.Name = named
	case scoped && (kind == "route" || kind == "replies" || kind == "withdraw" || kind == "workers"):
		if !oneToken(named) {
			return fmt.Errorf("no such request %q", kind+"."+named)
		}
	case scoped:
		return fmt.Errorf("no such request %q", kind+"."+named)
	case kind == "route":
		return errors.New("a route's request names its worker's identity (mdap.engine.route.<key>): this worker is older than the engine; upgrade it")
	case kind == "replies" && !req.Drop:
		// A Drop needs no identity: the consumer's name is the proof.
		return errors.New("a Drawer's request names its coordinator's identity (mdap.engine.replies.<key>): this coordinator is older than the engine; upgrade it")
	}
	switch kind {
	case "route":
		if req.Route == "" || len(req.Route) > 4096 {
			return errors.New("a route of 1 to 4096 bytes")
		}
		return provisionRoute(ctx, js, req.Route, cfg, named)
	case "replies":
		if !isDrawerID(req.Name) {
			return fmt.Errorf("reply consumer name %q: want d and up to 63 letters or digits", req.Name)
		}
		if req.Drop {
			return dropDrawer(ctx, js, req.Name, space)
		}
		// A name that is no nkey is a client's claim on a server
		// without roles (no identities): no quota.
		if !nkeys.IsValidPublicUserKey(named) {
			named = ""
		}
		return serveDrawer(ctx, js, req.Name, cfg, space, rates, named)
	case "withdraw":
		return withdrawJob(ctx, js, req)
	case "journal":
		if !scoped {
			return errors.New("a journal's request names its run (mdap.engine.journal.<run>)")
		}
		return provisionRunJournals(ctx, js, req.Name, cfg)
	case "runtasks":
		if !scoped {
			return errors.New("a run key's task queue request names its run (mdap.engine.runtasks.<run>)")
		}
		return serveRunTasks(ctx, js, req, cfg)
	case "tasks":
		if err := checkTaskRequest(req); err != nil {
			return err
		}
		_, err := js.CreateOrUpdateConsumer(ctx, TasksStream, taskConsumerConfig(req.Name, tasksSubject+req.Name+".", req.AckWait))
		return err
	default:
		return fmt.Errorf("no such request %q", kind)
	}
}

// checkTaskRequest checks a task queue's request: a run or queue name,
// a retention of a minute to ten years, an ack wait of 1s to 1h.
func checkTaskRequest(req agentRequest) error {
	if err := checkName("run", req.Name); err != nil {
		return err
	}
	if req.MaxAge < time.Minute || req.MaxAge > MaxRetention {
		return fmt.Errorf("retention %s: use 1m to 10 years", req.MaxAge)
	}
	if req.AckWait < time.Second || req.AckWait > time.Hour {
		return fmt.Errorf("task ack wait %s: use 1s to 1h", req.AckWait)
	}
	return nil
}

// askOwn asks the engine's agent for what kind names in the lane of this
// connection's identity (mdap.engine.<kind>.<key>: agentlanes.go); a
// stock server's authorization block written before those subjects
// refuses it, and the request is asked unscoped, in the lane it shares
// with every such.
func askOwn(ctx context.Context, nc *nats.Conn, kind string, req agentRequest) error {
	own := kind + "." + replyIdentity(nc.Opts.InboxPrefix, "")
	_, err := unlessRefused(ctx, nc, agentSubject+own, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, askAgent(ctx, nc, own, req)
	})
	if errors.Is(err, ErrAuth) {
		return askAgent(ctx, nc, kind, req)
	}
	return err
}

// askAgent asks the engine's agent for what kind names; errNoAgent when
// none answers. A request its lane had no room for is asked again after
// the wait the agent names, for up to agentTimeout in all.
func askAgent(ctx context.Context, nc *nats.Conn, kind string, req agentRequest) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, agentTimeout)
	defer cancel()
	var resp agentResponse
	for {
		m, err := nc.RequestWithContext(ctx, agentSubject+kind, data)
		if errors.Is(err, nats.ErrNoResponders) {
			return errNoAgent
		}
		if err != nil {
			return fmt.Errorf("%w: ask the engine for the %s: %w", ErrEngine, kind, err)
		}
		resp = agentResponse{}
		if err := json.Unmarshal(m.Data, &resp); err != nil {
			return fmt.Errorf("%w: the engine's answer: %w", ErrEngine, err)
		}
		if !resp.Busy || wait.Sleep(ctx, resp.RetryIn) != nil {
			break
		}
	}
	if resp.Error != "" {
		err := fmt.Errorf("%w: the engine refused the %s: %s", ErrEngine, kind, resp.Error)
		if resp.RetryIn > 0 {
			return &retryLater{wait: resp.RetryIn, err: err}
		}
		return err
	}
	return nil
}
