package cluster

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/nats-io/nuid"
)

// Role is what a client of the engine may do. A server with roles
// (ServerConfig.Roles) gives each role only the subjects its job needs,
// named one by one:
//
//   - RoleWorker takes jobs from the routes' queues and acknowledges
//     what it holds, through the engine's agent, on subjects naming its
//     own identity (mdap.engine.work.<inbox>.>: see ServeAgent), publishes
//     replies on RepliesStream, hears cancellation notices and asks the
//     engine for its route's consumer. It cannot pull from a consumer or
//     acknowledge, NAK or report progress on a job delivered to another. It cannot create, update or
//     delete a stream, a consumer or a bucket, read a job it was not
//     delivered, publish a job, or touch a journal, a lease, a task queue
//     or a result.
//   - RoleCoordinator publishes jobs, on subjects naming its own key
//     only (mdap.jobs.<route>.<key>: the engine keeps at most
//     ProvisionConfig.KeyJobs of them per route), consumes its replies (through a
//     consumer the engine makes for it) and uses the journals, leases,
//     task queues and results of every run: their subjects of the shared
//     streams (JournalsStream, TasksStream, the lease bucket,
//     ResultsBucket), reading through consumers filtered to them and
//     direct gets by subject, and its task queue's consumer, made by the
//     engine (mdap.engine.tasks). It cannot create, update, purge or
//     delete any stream or bucket, publish a reply, read (message-get or
//     get by sequence), take or delete jobs (it withdraws its own through
//     the engine, showing each job's lease: mdap.engine.withdraw), or
//     list the engine. It may touch every run's journal, lease, task
//     queue and results: keep it for the operator, and give others a
//     RunRole.
//   - RunRole(run) is a coordinator of one run only (a tenant): see
//     RunRole.
//   - RoleAdmin is the engine's operator: every subject. The engine
//     provisions its resources with it (Provision, ServeAgent), and
//     maker nats ls and rm sign in with it.
//
// Every client subscribes only under its own connection's inbox, so no
// client sees the jobs delivered to another, nor another's replies.
type Role string

// The roles of the engine.
const (
	RoleWorker      Role = "worker"
	RoleCoordinator Role = "coordinator"
	RoleAdmin       Role = "admin"
)

// Roles lists the roles, in the order of the credential files.
var Roles = []Role{RoleCoordinator, RoleWorker, RoleAdmin}

// runRolePrefix starts the role of a coordinator of one run.
const runRolePrefix = "run:"

// RunRole is the role of a coordinator identity issued for one run
// (AddRunCoordinator): a tenant of the engine. It draws samples as
// RoleCoordinator does, and uses the journal, the lease and the task
// queue (tasks, consumer, results) named run, and the journals and leases
// of that queue's tasks (run.<task>), each on a stream or bucket of its
// own bounded by its budget (RunStream, RunLeaseBucket, RunQueueStream,
// RunResultsBucket), and nothing else: it cannot read or write another
// run's journal or task queue, take or drop another run's lease, write on
// the shared streams and buckets of runs' data, nor do anything
// RoleCoordinator cannot. run must pass CheckRunName.
func RunRole(run string) Role { return Role(runRolePrefix + run) }

// RunOf returns the run of a RunRole, and false for any other role.
func RunOf(r Role) (string, bool) {
	run, ok := strings.CutPrefix(string(r), runRolePrefix)
	return run, ok && checkName("run", run) == nil
}

// ErrAuth: a credential could not be read or made, or a client was
// refused by the server (no credentials, wrong credentials, a subject
// outside its role).
var ErrAuth = errors.New("authentication")

// SeedFile and PubFile name a role's credential files in a credentials
// folder: ROLE.nk holds the role's nkey seed (the secret a client
// authenticates with, mode 0600), ROLE.pub the public keys the server
// accepts for the role, one per line (any number: one per machine, say).
func SeedFile(dir string, r Role) string { return filepath.Join(dir, string(r)+".nk") }

// PubFile: see SeedFile.
func PubFile(dir string, r Role) string { return filepath.Join(dir, string(r)+".pub") }

// RoleKeys are the public nkeys a server accepts, by role.
type RoleKeys map[Role][]string

// EnsureCredentials makes dir hold a credential for each role: when a
// role has no ROLE.pub yet, it generates an nkey pair, writes its seed to
// ROLE.nk and its public key to ROLE.pub, both mode 0600 in a folder of
// mode 0700. An existing ROLE.pub is used as it is (supply your own keys
// that way: `nk -gen user -pubout`, or keys of several machines, one a
// line; the seeds then stay on their machines). It returns the keys the
// server accepts and which roles were generated now. The worker
// identities issued in dir (AddWorker) are workers too, and each run's
// coordinator identity (AddRunCoordinator) has its RunRole.
//
// roles are the roles whose keys are made and accepted; none given means
// every role of Roles. A role left out is neither generated nor accepted,
// even when its ROLE.pub exists: maker nats leaves RoleCoordinator out
// unless asked (--shared-coordinator), since one coordinator key may
// touch every run, and run keys serve each run. Errors wrap ErrAuth.
func EnsureCredentials(dir string, roles ...Role) (RoleKeys, []Role, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("%w: credentials folder: %w", ErrAuth, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("%w: credentials folder: %w", ErrAuth, err)
	}
	keys := RoleKeys{}
	var made []Role
	if len(roles) == 0 {
		roles = Roles
	}
	for _, r := range roles {
		if !slices.Contains(Roles, r) {
			return nil, nil, fmt.Errorf("%w: %q is not a role of a credentials file (want one of %v)", ErrAuth, r, Roles)
		}
		pubs, err := readPubs(PubFile(dir, r))
		if errors.Is(err, fs.ErrNotExist) {
			if err := generate(dir, r); err != nil {
				return nil, nil, err
			}
			made = append(made, r)
			pubs, err = readPubs(PubFile(dir, r))
		}
		if err != nil {
			return nil, nil, err
		}
		keys[r] = pubs
	}
	names, workers, err := IssuedWorkers(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		keys[RoleWorker] = append(keys[RoleWorker], workers[name])
	}
	runs, coords, err := IssuedRunCoordinators(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, run := range runs {
		keys[RunRole(run)] = []string{coords[run]}
	}
	return keys, made, nil
}

func generate(dir string, r Role) error {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return fmt.Errorf("%w: generate the %s key: %w", ErrAuth, r, err)
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	if err := writeSecret(SeedFile(dir, r), append(seed, '\n')); err != nil {
		return err
	}
	return writeSecret(PubFile(dir, r), []byte(pub+"\n"))
}

// writeSecret writes a file of mode 0600 atomically: a new temporary file
// of a fresh random name in path's folder (os.CreateTemp, mode 0600,
// never one that exists, so never through a planted link), synced, then
// renamed into place, so a reader never sees half a key.
func writeSecret(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrAuth, path, err)
	}
	tmp := f.Name()
	if err = f.Chmod(0o600); err == nil {
		if _, err = f.Write(data); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%w: write %s: %w", ErrAuth, path, err)
	}
	return nil
}

func readPubs(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrAuth, err)
	}
	var pubs []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !nkeys.IsValidPublicUserKey(line) {
			return nil, fmt.Errorf("%w: %s line %d: not a public user nkey (U...); make one with `nk -gen user -pubout`", ErrAuth, path, n)
		}
		pubs = append(pubs, line)
	}
	if len(pubs) == 0 {
		return nil, fmt.Errorf("%w: %s holds no public key", ErrAuth, path)
	}
	return pubs, nil
}

// inboxPrefix is the inbox prefix of a connection authenticated by the
// public key pub: _INBOX_<pub>.<random>. A server with roles lets the
// connection subscribe under it only; a stock nats-server configured as
// docs/nats.md says lets it subscribe under _INBOX_<pub>.>.
func inboxPrefix(pub string) string { return "_INBOX_" + pub + "." + nuid.Next() }

// Credentials returns the options a client connects with as the holder
// of the nkey seed in seedFile: the nkey (signing the server's nonce) and
// an inbox of its own, announced in the connection's name so that a
// server with roles scopes the client's subscriptions to it. name is the
// connection's name for people. Errors wrap ErrAuth (no such file, not a
// seed).
func Credentials(seedFile, name string) ([]nats.Option, error) {
	raw, err := os.ReadFile(seedFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAuth, err)
	}
	kp, err := nkeys.FromSeed(bytes.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not an nkey seed: %w", ErrAuth, seedFile, err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrAuth, seedFile, err)
	}
	inbox := inboxPrefix(pub)
	return []nats.Option{
		nats.Nkey(pub, kp.Sign),
		nats.CustomInboxPrefix(inbox),
		nats.Name(name + " " + inbox),
	}, nil
}

// roleAuth is the embedded server's authentication with roles: a client
// signs the server's nonce with an nkey of a role, and gets the role's
// permissions plus its own inbox. Until the engine has provisioned its
// resources (open), only the engine's own connection (the internal token)
// gets in.
type roleAuth struct {
	internal string // the token of the engine's own connection
	open     atomic.Bool
	// engine and clients are the accounts (accounts.go): the engine's
	// own connection and the admin sign in to engine, the others to
	// clients.
	engine, clients *server.Account

	mu        sync.Mutex
	roles     map[string]Role   // public key -> role
	conns     map[uint64]string // client id -> public key, of clients let in
	maxPerKey int               // connections a key may hold at once; 0: no bound
	alive     func(uint64) bool // whether a client is still connected; nil: all are
}

// DefaultMaxConnsPerKey is how many connections one key may hold at once
// on the embedded server when ServerConfig.MaxConnsPerKey is 0: far more
// than a worker or a coordinator process needs (one each).
const DefaultMaxConnsPerKey = 256

// roomFor reports whether pub may open one more connection; called with
// mu held. The connections gone are forgotten first when pub is at its
// bound.
func (a *roleAuth) roomFor(pub string) bool {
	if a.maxPerKey <= 0 {
		return true
	}
	count := func() int {
		n := 0
		for _, p := range a.conns {
			if p == pub {
				n++
			}
		}
		return n
	}
	if count() < a.maxPerKey {
		return true
	}
	if a.alive != nil {
		for id, p := range a.conns {
			if p == pub && !a.alive(id) {
				delete(a.conns, id)
			}
		}
	}
	return count() < a.maxPerKey
}

func newRoleAuth(keys RoleKeys, internal string) *roleAuth {
	a := &roleAuth{internal: internal, conns: map[uint64]string{}}
	a.roles = rolesOf(keys)
	return a
}

func rolesOf(keys RoleKeys) map[string]Role {
	roles := map[string]Role{}
	for r, pubs := range keys {
		for _, p := range pubs {
			roles[p] = r
		}
	}
	return roles
}

// prune forgets the clients no longer connected.
func (a *roleAuth) prune(alive func(uint64) bool) {
	a.mu.Lock()
	ids := make([]uint64, 0, len(a.conns))
	for id := range a.conns {
		ids = append(ids, id)
	}
	a.mu.Unlock()
	for _, id := range ids {
		if !alive(id) {
			a.mu.Lock()
			delete(a.conns, id)
			a.mu.Unlock()
		}
	}
}

// set replaces the keys accepted and returns the ids of the clients let
// in with a key no longer accepted (or now of another role).
func (a *roleAuth) set(keys RoleKeys) []uint64 {
	roles := rolesOf(keys)
	a.mu.Lock()
	defer a.mu.Unlock()
	var gone []uint64
	for id, pub := range a.conns {
		if roles[pub] != a.roles[pub] || roles[pub] == "" {
			gone = append(gone, id)
			delete(a.conns, id)
		}
	}
	a.roles = roles
	return gone
}

// viaPipe reports whether c came through the server's own pipe
// (server.InProcessConn, net.Pipe), not a listener: the engine's own
// connection does, so its token is worth nothing to whoever learns it.
func viaPipe(c server.ClientAuthentication) bool {
	addr := c.RemoteAddress()
	return addr != nil && addr.Network() == "pipe"
}

// Check implements server.Authentication.
func (a *roleAuth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if a.internal != "" && o.Nkey == "" && viaPipe(c) && subtle.ConstantTimeCompare([]byte(o.Token), []byte(a.internal)) == 1 {
		c.RegisterUser(&server.User{Username: "engine", Permissions: Permissions(RoleAdmin, ""), Account: a.engine})
		return true
	}
	if !a.open.Load() {
		return false
	}
	a.mu.Lock()
	role, ok := a.roles[o.Nkey]
	a.mu.Unlock()
	if !ok || o.Sig == "" {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(o.Sig)
	if err != nil {
		if sig, err = base64.StdEncoding.DecodeString(o.Sig); err != nil {
			return false
		}
	}
	kp, err := nkeys.FromPublicKey(o.Nkey)
	if err != nil || kp.Verify(c.GetNonce(), sig) != nil {
		return false
	}
	// The inbox the client announced as the last word of its name; one
	// not under _INBOX_<its key>. is refused.
	inbox := o.Name[strings.LastIndexByte(o.Name, ' ')+1:]
	rest, ok := strings.CutPrefix(inbox, "_INBOX_"+o.Nkey+".")
	if !ok || !oneToken(rest) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.roles[o.Nkey] != role { // revoked meanwhile
		return false
	}
	if !a.roomFor(o.Nkey) {
		return false
	}
	a.conns[c.GetID()] = o.Nkey
	acc := a.clients
	if engineRole(role) {
		acc = a.engine
	}
	c.RegisterUser(&server.User{Username: string(role) + ":" + o.Nkey[:12], Permissions: Permissions(role, inbox), Account: acc})
	return true
}

// coordinatorStreams are the streams a coordinator reads the state of
// (stream info): the sample streams, and the shared streams and buckets
// of runs. Stream info cannot be scoped to a subject, so a coordinator
// may learn the names of other runs (the subjects, with a filter) and
// their message counts, never their content.
var coordinatorStreams = []string{JobsStream, RepliesStream, "KV_" + LeaseBucket, JournalsStream, TasksStream, "KV_" + ResultsBucket}

// Permissions returns the NATS permissions of role for a client whose
// inbox prefix is inbox ("_INBOX_<public key>" for a stock server's user,
// where each worker machine has its own key): what a server with roles
// grants, and what docs/nats.md configures on a stock nats-server. Each
// role's publications are an allow-list of the subjects its job needs;
// no role but the admin may create, update, delete or purge a stream or
// a bucket.
func Permissions(role Role, inbox string) *server.Permissions {
	sub := &server.SubjectPermission{Allow: []string{inbox + ".>"}}
	switch role {
	case RoleAdmin:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{">"}},
			Subscribe: &server.SubjectPermission{Allow: []string{">"}},
		}
	case RoleWorker:
		sub.Allow = append(sub.Allow, cancelSubject+">")
		return &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{
				"$JS.API.STREAM.INFO." + JobsStream,
				"$JS.API.STREAM.INFO." + RepliesStream,
				"$JS.API.CONSUMER.INFO." + JobsStream + ".*",
				ReplyPermission(inbox),
				agentSubject + "route." + replyIdentity(inbox, ""),
				// Unscoped, an older worker's request: the agent
				// answers it with the upgrade it needs, adding nothing.
				agentSubject + "route",
				workSubject + workerIdentity(inbox) + ".>",
			}},
			Subscribe: sub,
		}
	case RoleCoordinator:
		return &server.Permissions{Publish: &server.SubjectPermission{Allow: coordinatorPublications("", inbox)}, Subscribe: sub}
	default: // RunRole(run); any other role gets its inbox only
		run, ok := RunOf(role)
		if !ok {
			return &server.Permissions{Publish: &server.SubjectPermission{Deny: []string{">"}}, Subscribe: sub}
		}
		return &server.Permissions{Publish: &server.SubjectPermission{Allow: coordinatorPublications(run, inbox)}, Subscribe: sub}
	}
}

// coordinatorPublications are the subjects a coordinator may publish on:
// the sample path of every coordinator (jobs, cancellations, its reply
// consumer through the engine), and the subjects of runs' data under the
// shared streams and buckets of every run for RoleCoordinator (run ""),
// and for RunRole(run) those of its own journal stream, lease bucket,
// task stream and result bucket only (see ownRunData). JetStream's API names a
// direct get's subject ($JS.API.DIRECT.GET.<stream>.<subject>), so a
// read of the last line is scoped the same way; a batched direct get
// (the lines of a journal) names its stream only, and is granted on a
// stream whose every line the coordinator may read (a run key's own); a
// purge, a delete or a consumer's creation is not granted (a consumer's
// delivery subject is in the request's body, which permissions cannot
// see). The consumers a coordinator reads through are made by the
// engine: its reply consumer and its task queue's (q_<queue>, named in
// full for a run coordinator). Its jobs go on
// subjects naming its key (mdap.jobs.<route>.<key>, the key of its inbox
// _INBOX_<key>), so the engine bounds each key's jobs per route
// (ProvisionConfig.KeyJobs).
func coordinatorPublications(run, inbox string) []string {
	// own lists the subject patterns of runs' data this coordinator
	// owns, under prefix: every run's, or run's and its tasks'.
	own := func(prefix string) []string {
		if run == "" {
			return []string{prefix + ">"}
		}
		return []string{prefix + run, prefix + run + ".>"}
	}
	allow := []string{
		jobsSubject + "*." + replyIdentity(inbox, ""), cancelSubject + ">",
		// Its reply consumers, asked in its own name (DrawerQuota);
		// unscoped, an older coordinator's request, which the agent
		// answers with the upgrade it needs (a Close's drop is served).
		agentSubject + "replies." + replyIdentity(inbox, ""), agentSubject + "replies",
		// Its withdrawals and worker counts, asked in its own name too, so
		// that the agent serves each identity's requests in a lane of its
		// own (agentlanes.go); unscoped, an older coordinator's.
		agentSubject + "withdraw." + replyIdentity(inbox, ""), agentSubject + "workers." + replyIdentity(inbox, ""),
		agentSubject + "withdraw", agentSubject + "workers",
		"$JS.API.CONSUMER.INFO." + JobsStream + ".*",
	}
	for _, st := range coordinatorStreams {
		allow = append(allow, "$JS.API.STREAM.INFO."+st)
	}
	// The reply consumer the engine made for it: its name is random and
	// known to it and the engine only (no subject a coordinator reads
	// carries it: replyToken), and only the engine deletes it.
	allow = append(allow,
		"$JS.API.CONSUMER.INFO."+RepliesStream+".*",
		"$JS.API.CONSUMER.MSG.NEXT."+RepliesStream+".*", "$JS.ACK."+RepliesStream+".>")
	// Journals: append, read the last line, read by batched direct gets:
	// every run's on the shared JournalsStream, or a run key's on its
	// run's own stream, whose bytes are its budget (RunStream), which it
	// asks the engine for. No consumer: a consumer's delivery subject is
	// its maker's choice, which no permission can scope, and the server
	// would store what it delivers in whatever stream takes that subject
	// (another run's journal, the jobs or the replies).
	journals, subjects := JournalsStream, own(journalSubject)
	if run != "" {
		subj := runJournalSubject(run)
		journals, subjects = RunStream(run), []string{subj, subj + ".>"}
		allow = append(allow, agentSubject+"journal."+run, "$JS.API.STREAM.INFO."+journals)
	}
	for _, subj := range subjects {
		allow = append(allow, subj, "$JS.API.DIRECT.GET."+journals+"."+subj)
	}
	// A batched direct get names its subject in its body, unscoped: the
	// stream is the run key's own (or, for the shared coordinator, every
	// run's, which it may read in any case).
	allow = append(allow, "$JS.API.DIRECT.GET."+journals)
	if run != "" {
		// A run key's leases, task queue and results are in things of
		// its own (RunLeaseBucket, RunQueueStream, RunResultsBucket),
		// bounded by its budget and made by the engine at its request:
		// their every subject and key is its run's, so they are named
		// whole. It keeps no grant on the shared ones, which one key
		// could fill for every run.
		return append(allow, ownRunData(run)...)
	}
	// The shared coordinator: leases, results and task queues of every
	// run on the shared streams and buckets.
	allow = append(allow,
		"$KV."+LeaseBucket+".>", "$JS.API.DIRECT.GET.KV_"+LeaseBucket+".$KV."+LeaseBucket+".>",
		"$KV."+ResultsBucket+".*.>", "$JS.API.DIRECT.GET.KV_"+ResultsBucket+".$KV."+ResultsBucket+".*.>",
		// Task queues: publish its tasks, ask the engine for a queue's
		// consumer, take, acknowledge.
		tasksSubject+"*.>", agentSubject+"tasks.*", agentSubject+"tasks",
		"$JS.API.CONSUMER.INFO."+TasksStream+".*", "$JS.API.CONSUMER.MSG.NEXT."+TasksStream+".*", "$JS.ACK."+TasksStream+".>",
		// Every stream's state, an earlier mdap's per-run streams and
		// the run keys' among them (ErrOldLayout, and a run key's run
		// refused by name).
		"$JS.API.STREAM.INFO.*")
	return allow
}

// ownRunData are the subjects of run's key on its own lease bucket, task
// stream and result bucket: writes and direct gets of its keys, its
// tasks, the engine's request for its queue (mdap.engine.runtasks.<run>),
// its queue's consumer (q_<run>, named in full), and the state of each;
// and the state of an earlier mdap's streams of its run, to refuse
// resuming them with a clear message (ErrOldLayout).
func ownRunData(run string) []string {
	leases, results, queue := RunLeaseBucket(run), RunResultsBucket(run), RunQueueStream(run)
	return []string{
		"$KV." + leases + ".>", "$JS.API.DIRECT.GET.KV_" + leases + ".>", "$JS.API.STREAM.INFO.KV_" + leases,
		"$KV." + results + ".>", "$JS.API.DIRECT.GET.KV_" + results + ".>", "$JS.API.STREAM.INFO.KV_" + results,
		runTasksSubject(run) + ">", agentSubject + "runtasks." + run, "$JS.API.STREAM.INFO." + queue,
		"$JS.API.CONSUMER.INFO." + queue + "." + taskConsumerOf(run),
		"$JS.API.CONSUMER.MSG.NEXT." + queue + "." + taskConsumerOf(run),
		"$JS.ACK." + queue + "." + taskConsumerOf(run) + ".>",
		"$JS.API.STREAM.INFO." + JournalStreamPrefix + run, "$JS.API.STREAM.INFO." + TaskStreamPrefix + run,
	}
}

// StockAuthConfig is the accounts block of a stock nats-server's
// configuration file that gives the keys the same roles, in the same
// accounts, as an embedded server with Roles: one nkey user per public
// key, each with its role's permissions and an inbox of its own
// (_INBOX_<key>.>); the admin in EngineAccount, the only account with
// JetStream, every other role in ClientsAccount, which imports from it
// the subjects clients publish on (accounts.go), so that JetStream's
// answers on a reply subject a client names reach no stream and no API.
// The server's configuration keeps its jetstream block (the store);
// the block replaces an authorization block. Give each worker machine
// its own key (several lines in worker.pub): machines sharing a key
// share an inbox, and could read each other's jobs.
func StockAuthConfig(keys RoleKeys) string {
	roles := slices.Clone(Roles)
	var runs []Role
	for r := range keys {
		if _, ok := RunOf(r); ok {
			runs = append(runs, r)
		}
	}
	slices.Sort(runs)
	var engine, clients []string
	for _, r := range append(roles, runs...) {
		for _, pub := range keys[r] {
			p := Permissions(r, "_INBOX_"+pub)
			var b strings.Builder
			fmt.Fprintf(&b, "      # %s\n      { nkey: %q, permissions: {\n", r, pub)
			fmt.Fprintf(&b, "          publish: { allow: %s", quoteList(p.Publish.Allow))
			if len(p.Publish.Deny) > 0 {
				fmt.Fprintf(&b, ", deny: %s", quoteList(p.Publish.Deny))
			}
			fmt.Fprintf(&b, " },\n          subscribe: { allow: %s } } },\n", quoteList(p.Subscribe.Allow))
			if engineRole(r) {
				engine = append(engine, b.String())
			} else {
				clients = append(clients, b.String())
			}
		}
	}
	return accountsConfig(engine, clients)
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
