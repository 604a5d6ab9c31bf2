package cluster

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// How an engine's clients sign in (EngineConfig.Auth).
const (
	// AuthRoles: a key per role, each role only its subjects (the
	// default).
	AuthRoles = "roles"
	// AuthToken: one shared token, no roles: any holder can answer jobs
	// or rewrite journals.
	AuthToken = "token"
)

// EngineConfig are the settings of an embedded engine as maker nats runs
// it: where it listens and keeps its streams, how clients sign in (the
// credentials folder's keys, or a token), and what it provisions. It
// validates itself (Validate) and becomes a ServerConfig (ServerConfig)
// that StartServer takes.
type EngineConfig struct {
	// Addr is HOST:PORT to listen on; empty means DefaultAddr.
	Addr string `flag:"addr" usage:"HOST:PORT to listen on (port 0: a free one, printed)"`
	// Store is the folder JetStream keeps its streams in; required.
	Store string `flag:"store" usage:"folder JetStream keeps its streams in (jobs, journals, tasks); kept across restarts"`
	// Creds is the credentials folder (with AuthRoles); empty means
	// Store/creds. Its missing keys are made (EngineCreds.Ensure).
	Creds string `flag:"creds" usage:"folder of the role credentials (generated when missing; default STORE/creds)"`
	// Auth is AuthRoles (empty means it) or AuthToken.
	Auth string `flag:"auth" usage:"roles (nkeys per role, each role only its subjects) or token ($MDAP_NATS_TOKEN, no roles)"`
	// Token is the token every client must send with AuthToken
	// (maker nats reads it from $MDAP_NATS_TOKEN); required then.
	Token string
	// SharedCoordinator and SharedWorker also make and accept the
	// shared keys (see EngineCreds), with AuthRoles only.
	SharedCoordinator bool `flag:"shared-coordinator" usage:"also make and accept coordinator.nk, one coordinator key for every run: RISK: any holder may read and append to every run's journal, take its lease, and read and write every task queue and its results; by default coordinators use the key of their run (maker nats run add RUN)"`
	SharedWorker      bool `flag:"shared-worker" usage:"also make and accept worker.nk, one key for every worker: RISK: any holder acts as every worker (--min-workers counts them as one), and revoking one worker means revoking all; by default each worker has its own identity (maker nats worker add NAME)"`
	// SyncAlways: see ServerConfig.SyncAlways.
	SyncAlways bool `flag:"sync-always" usage:"fsync every write before acknowledging it (a power loss loses no acknowledged journal line; slower)"`
	// Monitor: see ServerConfig.Monitor.
	Monitor string `flag:"monitor-addr" usage:"expose the NATS server's own monitoring endpoints (/varz, /jsz, /healthz) on [HOST]:PORT; a port alone listens on 127.0.0.1; loopback only, as they have no authentication"`
	// Provision is what the engine provisions with AuthRoles: see
	// ServerConfig.Provision. Its Replicas must be 0 or 1: the embedded
	// server is a single node.
	Provision ProvisionConfig
}

// DefaultEngine is the EngineConfig of maker nats's defaults, written
// out: the default address, the store mdap-nats, role keys, and
// DefaultProvision.
func DefaultEngine() EngineConfig {
	return EngineConfig{Addr: DefaultAddr, Store: "mdap-nats", Auth: AuthRoles, Provision: DefaultProvision()}
}

// DefaultProvision is the ProvisionConfig of the Default values its zero
// fields read as, written out, for a caller that shows them (the engine
// commands' flags), with one replica.
func DefaultProvision() ProvisionConfig {
	return ProvisionConfig{Replicas: 1, AckWait: DefaultAckWait, MaxDeliver: DefaultMaxDeliver, KeyJobs: DefaultKeyJobs, MaxRoutes: DefaultMaxRoutes,
		RouteQuota: DefaultRouteQuota, DrawerQuota: DefaultDrawerQuota, DrawerEvery: DefaultDrawerEvery, MaxDrawers: DefaultMaxDrawers,
		ReplyKeep: DefaultReplyKeep, ReplyBytes: DefaultReplyBytes, RunKeyBytes: DefaultRunKeyBytes, JobBytes: DefaultJobBytes}
}

// Validate reports the first setting that cannot run as a
// *fielderr.Error wrapping ErrConfig that names the field ("Addr",
// "Store", "Monitor", "Provision.Replicas", "Auth", "Token",
// "SharedCoordinator", "SharedWorker", or a field of ProvisionConfig by
// its own name, as ProvisionConfig.Validate names it), without starting
// or writing anything.
func (c EngineConfig) Validate() error {
	const cfg = "cluster.EngineConfig"
	if fix := listenAddrFix(c.Addr); fix != "" {
		return fielderr.New(cfg, "Addr", c.Addr, fix)
	}
	if c.Store == "" {
		return fielderr.New(cfg, "Store", c.Store, "give the folder JetStream keeps its streams in")
	}
	if err := CheckMonitor(c.Monitor); err != nil {
		return fielderr.Of(cfg, "Monitor", c.Monitor, err)
	}
	if err := c.Provision.Validate(); err != nil {
		return err
	}
	if n := c.Provision.Replicas; n > 1 {
		return fielderr.New(cfg, "Provision.Replicas", n, fmt.Sprintf("the embedded server is a single node and keeps one copy of each stream: use 1; for %d replicas run a cluster of stock nats-server nodes (maker nats config) and provision it with maker nats provision --replicas %d", n, n))
	}
	switch c.Auth {
	case "", AuthRoles:
	case AuthToken:
		for _, f := range []fielderr.Field{{Name: "SharedCoordinator", Value: c.SharedCoordinator}, {Name: "SharedWorker", Value: c.SharedWorker}} {
			if f.Value == true {
				return &fielderr.Error{Config: cfg, Fields: []fielderr.Field{f}, Fix: "with Auth token there are no role keys to share: leave it out, or use Auth roles"}
			}
		}
		if c.Token == "" {
			return fielderr.New(cfg, "Token", c.Token, "give the token clients must send")
		}
	default:
		return fielderr.New(cfg, "Auth", c.Auth, "use roles (the default) or token")
	}
	return nil
}

// ServerConfig validates c and turns it into the ServerConfig StartServer
// takes, with the store's absolute path; with AuthRoles it makes the
// credentials folder's missing keys and returns the folder's settings
// (for EngineCreds.Watch) and the roles whose keys it made now. Errors
// are Validate's, or wrap ErrAuth (the folder).
func (c EngineConfig) ServerConfig() (ServerConfig, EngineCreds, []Role, error) {
	if err := c.Validate(); err != nil {
		return ServerConfig{}, EngineCreds{}, nil, err
	}
	store, err := filepath.Abs(c.Store)
	if err != nil {
		return ServerConfig{}, EngineCreds{}, nil, fielderr.Of("cluster.EngineConfig", "Store", c.Store, err)
	}
	sc := ServerConfig{Addr: c.Addr, StoreDir: store, SyncAlways: c.SyncAlways, Monitor: c.Monitor}
	if c.Auth == AuthToken {
		sc.Token = c.Token
		return sc, EngineCreds{}, nil, nil
	}
	dir, err := filepath.Abs(cmp.Or(c.Creds, filepath.Join(store, "creds")))
	if err != nil {
		return ServerConfig{}, EngineCreds{}, nil, fielderr.Of("cluster.EngineConfig", "Creds", c.Creds, err)
	}
	creds := EngineCreds{Dir: dir, SharedCoordinator: c.SharedCoordinator, SharedWorker: c.SharedWorker}
	keys, made, err := creds.Ensure()
	if err != nil {
		return ServerConfig{}, EngineCreds{}, nil, err
	}
	sc.Roles, sc.Provision = keys, c.Provision
	if sc.Provision.RunKeyBytesOf == nil {
		sc.Provision.RunKeyBytesOf = RunKeyBytesIn(dir)
	}
	return sc, creds, made, nil
}
