package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// A server with roles keeps JetStream in an account of its own: NATS
// checks no one's right to the reply subject a request names, and
// JetStream answers (a direct get, a pull's deliveries, a publication's
// acknowledgement, a stream's info) on that subject from inside its
// account, where its own API and every stream take the answer for the
// account's own message. In one account a run key's direct get of a line
// of its own journal, answered on $JS.API.STREAM.DELETE.MDAP_JOURNALS,
// deleted that stream, and one answered on another run's journal subject
// stored the thief's bytes there (review11). So the engine (its own
// connection, the admin) lives in EngineAccount, the only account with
// JetStream, and every worker and coordinator in ClientsAccount, which
// imports as services from it exactly the subjects clients publish on
// (clientServices). A request through an import is answered on a subject
// the server makes (_R_.…) in the engine's account and delivered to the
// client's reply subject in the clients' account, where it reaches
// subscribers only: no import, no JetStream API, no stream.

// The accounts of a server with roles (the embedded one with
// ServerConfig.Roles; a stock nats-server configured by StockAuthConfig).
const (
	// EngineAccount holds JetStream (every stream, bucket and consumer),
	// the engine's own connection, its agent and the admin.
	EngineAccount = "MDAP_ENGINE"
	// ClientsAccount holds the workers and the coordinators (RoleWorker,
	// RoleCoordinator, RunRole), with their roles' permissions.
	ClientsAccount = "MDAP_CLIENTS"
)

// clientService is a subject the clients' account imports from the
// engine's as a service; streamed when an answer is more than one
// message (a pull's deliveries, the agent's forwarding of jobs to a
// worker).
type clientService struct {
	subject  string
	streamed bool
	// wait is how long the server keeps a request's way back (its
	// response mapping, ~450 bytes in each account) with no answer, or
	// after a streamed answer's last message: answerWait when 0. It must
	// outlast the longest gap between a request and an answer it
	// carries; past it an answer reaches no one.
	wait time.Duration
}

// answerWait is how long the server keeps the way back of a request
// whose answer is one message (a JetStream call, an agent request) and
// has not come: NATS's default is 2 minutes, so one credential sending
// requests nobody answers (an acknowledgement of a delivery its consumer
// does not hold) at its connection's full rate held ~450 bytes each for
// that long (review12). JetStream answers in milliseconds, and clients
// give up after 5 s (jetstream's default timeout); a journal line, which
// waits longer, is published again when its acknowledgement is lost.
const answerWait = 10 * time.Second

// pullAnswerWait is the way back of a consumer's pull of a client's own
// (the Drawer's replies, a task queue, a journal's lines): its expiry is
// at most opTimeout, and idle heartbeats come at half of it.
const pullAnswerWait = opTimeout + 10*time.Second

// agentPullWait is the way back of a worker's pull through the agent: it
// waits at most maxPullWait for a job, and the agent ends it with an
// empty message (endOfStream), which the server takes as the end of a
// streamed answer and forgets it at once.
const agentPullWait = maxPullWait + 10*time.Second

// clientServices are the subjects clients publish on for the engine:
// every subject a role's permissions allow (Permissions) but the ones
// clients use among themselves (cancellation notices, mdap.cancel.>: a
// coordinator publishes, workers subscribe, all in the clients' account).
// This is the one list to extend when a role may publish on a new subject
// the engine serves; a subject missing here reaches nothing (a client's
// publication gets no acknowledgement: no responders).
func clientServices() []clientService {
	return []clientService{
		// Data: jobs, replies, journals (shared and per run), task
		// queues, leases and results; each publication acknowledged.
		{subject: jobsSubject + ">"},
		{subject: repliesSubject + ">"},
		{subject: journalSubject + ">"},
		{subject: runSubject + ">"},
		{subject: tasksSubject + ">"},
		// Every bucket's keys: the shared lease and result buckets and
		// each run key's own (RunLeaseBucket, RunResultsBucket), whose
		// names no wildcard of one token can match apart.
		{subject: "$KV.>"},
		// The engine's agent: a worker's pull is answered by the jobs it
		// forwards, then an end marker (streamed); any other request by
		// one message, so that the server forgets it once answered (a
		// streamed answer's entry stays 2 minutes after its last message:
		// one a job, were acknowledgements streamed). A work subject names
		// the worker's identity, one token (a stock server's key) or two
		// (the embedded server's key and connection); no two of these
		// overlap, or a request would reach the agent twice.
		{subject: agentSubject + "*"},
		{subject: agentSubject + "*.*"},
		{subject: workSubject + "*." + workPull, streamed: true, wait: agentPullWait},
		{subject: workSubject + "*.*." + workPull, streamed: true, wait: agentPullWait},
		{subject: workSubject + "*." + workAck},
		{subject: workSubject + "*.*." + workAck},
		// JetStream's API, the calls clients make.
		{subject: "$JS.API.STREAM.INFO.>"},
		{subject: "$JS.API.CONSUMER.INFO.>"},
		{subject: "$JS.API.CONSUMER.MSG.NEXT.>", streamed: true, wait: pullAnswerWait},
		// A batched get (a journal's lines) is answered in several.
		{subject: "$JS.API.DIRECT.GET.>", streamed: true},
		{subject: "$JS.ACK.>"},
		// No client may publish on it (no role's permissions name it),
		// but imported it keeps the server from giving the clients'
		// account, which has no JetStream, an API of its own that
		// answers every call "JetStream not enabled for account" and
		// shadows the imports above.
		{subject: "$JS.API.INFO"},
	}
}

// accountsConfig is the accounts block of a server with roles: the
// engine's account with JetStream, exporting clientServices, and the
// clients' importing them. engineUsers and clientUsers are the users'
// entries, each a configuration map ({ nkey: ..., permissions: ... });
// the embedded server gives none (its users are registered by roleAuth).
func accountsConfig(engineUsers, clientUsers []string) string {
	var b strings.Builder
	users := func(us []string) {
		b.WriteString("    users: [\n")
		for _, u := range us {
			b.WriteString(u)
		}
		b.WriteString("    ]\n")
	}
	fmt.Fprintf(&b, "accounts {\n  # the engine: JetStream, the engine's agent, the admin\n  %s {\n    jetstream: enabled\n", EngineAccount)
	users(engineUsers)
	b.WriteString("    exports: [\n")
	for _, s := range clientServices() {
		fmt.Fprintf(&b, "      { service: %q", s.subject)
		if s.streamed {
			b.WriteString(", response: stream")
		}
		fmt.Fprintf(&b, ", threshold: %q", cmpOr(s.wait, answerWait).String())
		fmt.Fprintf(&b, ", accounts: [%q] }\n", ClientsAccount)
	}
	b.WriteString("    ]\n  }\n")
	fmt.Fprintf(&b, "  # workers and coordinators: JetStream's answers to them land here, never in the engine's account\n  %s {\n", ClientsAccount)
	users(clientUsers)
	b.WriteString("    imports: [\n")
	for _, s := range clientServices() {
		fmt.Fprintf(&b, "      { service: { account: %q, subject: %q } }\n", EngineAccount, s.subject)
	}
	b.WriteString("    ]\n  }\n}\n")
	return b.String()
}

// engineRole reports whether a client of role r signs in to the engine's
// account.
func engineRole(r Role) bool { return r == RoleAdmin }

// globalAccount is the account of a server without accounts (NATS's $G):
// where the JetStream of a server without roles, or of an mdap from
// before the accounts, keeps its streams.
const globalAccount = "$G"

// adoptStore gives account to the JetStream store that account from left
// in storeDir, when to has none yet: JetStream keeps each account's
// streams in a folder of its own (storeDir/jetstream/<account>), so a
// store written by an engine of one account (without roles, or before the
// accounts) would otherwise show none of its journals to an engine with
// roles, and back. Both there: nothing moves. Errors wrap ErrEngine.
func adoptStore(storeDir, from, to string) error {
	base := filepath.Join(storeDir, server.JetStreamStoreDir)
	src, dst := filepath.Join(base, from), filepath.Join(base, to)
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return nil // there already (or unreadable: the server says so)
	}
	if _, err := os.Lstat(src); err != nil {
		return nil
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("%w: move the streams of account %s to %s: %w", ErrEngine, from, to, err)
	}
	return nil
}

// AdoptStockStore moves the streams a stock nats-server kept in NATS's
// global account ($G: no accounts, or the authorization block of an mdap
// before them) to EngineAccount, where the same server keeps them once
// its configuration is StockAuthConfig's accounts block; without the
// move every journal, lease and task of that engine is "stream not
// found" after the upgrade, and its runs start over. storeDir is the
// server's jetstream store_dir; JetStream keeps each account's streams
// in storeDir/jetstream/<account>. It is a step of the upgrade: stop the
// server, AdoptStockStore, write the accounts block, start the server
// (the server must not run: it holds the files). It reports whether it
// moved anything: false when storeDir holds no streams of $G (a new
// store, or moved already). Cost: one rename, no copy. It covers a
// single server: a cluster's meta group keeps each stream's account in
// its own state, which a rename does not change. Errors wrap ErrConfig
// (both accounts hold streams: the server already started with the
// accounts block and made new ones, which the operator must choose
// between) or ErrEngine (the rename failed).
func AdoptStockStore(storeDir string) (bool, error) {
	base := filepath.Join(storeDir, server.JetStreamStoreDir)
	src, dst := filepath.Join(base, globalAccount), filepath.Join(base, EngineAccount)
	if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("%w: %s and %s both hold streams: the server already ran with the accounts block; keep one (move the other away) and start again", ErrConfig, src, dst)
	}
	if err := adoptStore(storeDir, globalAccount, EngineAccount); err != nil {
		return false, err
	}
	return true, nil
}
