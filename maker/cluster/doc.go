// Package cluster is the NATS JetStream engine of mdap: it draws the
// samples of a run on many machines and keeps runs alive when any of them
// dies. Everything goes through JetStream as NATS designed it (work-queue
// streams, durable pull consumers, acknowledgements, message-id
// deduplication, expected-sequence publishes, a key-value bucket): there
// is no protocol of mdap's own beside the JSON of a job and its reply.
//
// # The parts
//
//   - [Worker]: a stateless sample worker. It takes jobs from its route's
//     queue, calls its model, publishes the reply and then acknowledges
//     the job (maker worker).
//   - [Drawer] and its [Model]: the coordinator's side. A Model is an
//     llms.Model whose calls are jobs for the workers of one route, so a
//     maker.Solver draws through the workers unchanged; maker.NewEnsemble
//     over several Models is an ensemble across machines.
//   - [CreateJournal], [OpenJournal]: a journal.Journal kept in a stream per
//     run, locked by a lease, so a run killed on one machine resumes on
//     another (--journal nats:RUN).
//   - [TaskQueue]: a batch's tasks spread over several coordinators, each
//     task completed once.
//   - [Coordinator], [OpenWorker], [Admin]: each side opened from its
//     settings alone (OpenCoordinator, OpenWorker, OpenAdmin), dialling
//     and signing in for itself; Close releases what it opened. The
//     commands use them; a program with a connection of its own uses the
//     parts above.
//   - [Server]: an embedded NATS server with JetStream (maker nats), for
//     one machine and for tests; a real NATS cluster serves the same
//     clients.
//
// # Roles
//
// A server with roles (ServerConfig.Roles, what maker nats runs) admits
// only clients signed in with a role's nkey (EnsureCredentials,
// Credentials) and gives each role only its subjects (Permissions): a
// worker takes jobs and answers the jobs it holds, a coordinator publishes
// jobs and owns journals, leases and task queues, the admin may do
// anything; every client subscribes under its own inbox only. The engine
// owns its resources: it provisions every stream and bucket, with its
// replicas (Provision), before it lets a client in, runs' data living
// under per-run subjects of shared streams (JournalsStream, TasksStream,
// ResultsBucket, LeaseBucket) but for a run key's, on a stream and
// buckets of its own bounded by its budget (RunStream, RunQueueStream,
// RunResultsBucket, RunLeaseBucket, ProvisionConfig.RunKeyBytes), and
// its agent (ServeAgent) makes the consumers clients ask for (a route's,
// a Drawer's replies', a task queue's) and a run key's streams and buckets,
// and pulls and acknowledges jobs for workers, each job bound to the
// worker identity it was delivered to; no client may create, update,
// purge or delete a stream or a bucket, and a coordinator creates only
// consumers filtered to its own runs' subjects (reading its journals and
// results). Worker identities are issued and
// revoked by the operator (AddWorker, RevokeWorker, Server.SetRoles); a
// reply bears the identity that sent it, so a vote may require several
// workers (vote.Config.MinVoters, DrawerConfig.Spread) and a worker whose
// answers lose far more often than its peers' is quarantined
// (Drawer.Watch, QuarantineAlpha).
// StockAuthConfig is the same for a stock nats-server, provisioned by
// maker nats provision. What runs leave is kept DefaultRetention unless chosen
// otherwise; List and RemoveRun show and remove it.
//
// # Routes: where workers and coordinators meet
//
// A route is the identity of the model the workers run
// (maker.ModelIdentity: for the simulated model its seed and every setting
// that changes an answer; for a provider its spec, such as
// "openai:gpt-4o-mini"). Jobs for a route go to subject
// mdap.jobs.<RouteToken(route)>.<key> of [JobsStream], key the
// publisher's (its credential's public key), and every worker of the
// route pulls from one durable consumer, w-<token> (through the engine's
// agent on a server with roles). The engine's JobsStream takes the jobs
// of the routes it serves only, at most ProvisionConfig.KeyJobs of one
// key on a route. A Model's Identity is
// its route, so a journal written through the engine records the same
// model as one written in process.
//
// # Determinism across machines
//
// A job carries each sample's identity (maker.SampleIDFrom on the
// coordinator), and the worker puts it back in its model's context
// (maker.WithSampleID). The simulated model's answer depends on (seed,
// step, sample index) only, so a run over any number of workers, whoever
// draws which sample, however the samples are batched into jobs and
// whatever dies on the way, equals a local run with the same seed: the
// same winners, votes and totals.
//
// # A wave's life
//
//  1. The calls of one wave of a step (vote.WaveFrom: the samples
//     vote.Race starts together) meet in Model.GenerateContent; the
//     first waits for the others (DrawerConfig.Gather at most) and
//     publishes one [Job] on JobsStream (message id: the job's id; a TTL:
//     the Drawer's Timeout) carrying the prompt once and each sample's
//     identity, seed and temperature. A call outside a wave is a job of
//     its own.
//  2. A worker of the route pulls it, draws its samples (each its own
//     model call, at most the worker's Inflight at once), reports
//     progress every third of the ack wait, publishes one [Reply]
//     answering every sample on RepliesStream (message id: the job's
//     lease key), on the job's reply subject followed by its identity
//     (its credential's key: ReplyPermission), and acknowledges the
//     job, which leaves the queue.
//  3. The Drawer's reply consumer hands each sample's answer to its
//     waiting call, once, if the reply bears the job's lease key
//     (Job.Lease, readable only by the worker the job was delivered to):
//     a reply without it is dropped and counted (DrawerStats.Forged), a
//     second reply counts nowhere.
//  4. A call that ends first (the race was decided, or the Timeout
//     passed) stops waiting; once every call of the job has, the job is
//     withdrawn: deleted from the queue if no worker took it, and a
//     cancellation notice stops the worker that did.
//
// # When a part dies
//
//   - A worker: the jobs it held are redelivered to another worker of the
//     route when their ack wait passes without a progress report
//     (DefaultAckWait). The race waits that long for those samples, then
//     gets the same answers.
//   - A coordinator: its queued jobs expire; its journal's lease expires
//     LeaseTTL after its last refresh (DefaultLeaseTTL), and another
//     coordinator resumes the run from the journal with no step twice; a
//     TaskQueue claim it held is redelivered after the queue's ack wait
//     and resumed from the task's journal.
//   - The server: clients reconnect until it is back. Jobs and replies
//     live in memory (JobsStream and RepliesStream are memory streams):
//     once reconnected, each coordinator creates the sample streams and
//     its reply consumer again if they are gone and asks every job it
//     still awaits again under the same message id (a duplicate if the
//     server kept it), so a lost message costs a retry, never a lost or
//     duplicated sample (DrawerStats.Reasked). Journals, leases and task
//     queues are on its store and survive a restart (a power loss too
//     with ServerConfig.SyncAlways, or on a cluster with 3 replicas).
//
// # Cost
//
// A wave through the engine is three stored messages (the job, the reply
// and the acknowledgement), whatever its number of samples; with
// DrawerConfig.Spread (maker --min-workers above 1) it is three per
// sample. Its wall time
// beyond its model calls is two stored hops through the server, the job
// from the coordinator's publication to a worker and the reply back,
// each waited for in turn, plus encoding and decoding both (about 0.1 ms
// of CPU for a 2.4 KB prompt and three samples) and a few hand-offs
// between goroutines. Measured on loopback on a shared, loaded 2-core
// machine (6-disk Hanoi, k = 3, a 20 ms model): 1.5 to 2.5 ms a wave,
// of which the two hops are about two thirds (0.5 ms each at the median,
// where core NATS takes about 0.35 ms on the same server; their tails
// are longer), encoding/json's job codec a fifth. `maker bench --suite engine` measures
// it against core NATS request/reply carrying the same job and against
// drawing in process; BenchmarkEngine draws one sample a job.
package cluster
