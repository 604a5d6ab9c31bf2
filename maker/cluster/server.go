package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultAddr is where StartServer listens when ServerConfig.Addr is empty:
// loopback only, on NATS's usual port.
const DefaultAddr = "127.0.0.1:4222"

// ServerConfig configures an embedded NATS server with JetStream.
type ServerConfig struct {
	// Addr is host:port to listen on; empty means DefaultAddr. Port 0
	// picks a free port (read it back with ClientURL). A host other than
	// loopback exposes the server to the network: set Token.
	Addr string
	// StoreDir is where JetStream keeps streams (jobs, replies, journals,
	// tasks); required. A restarted server on the same folder has them
	// all back.
	StoreDir string
	// Roles, if set, are the public nkeys the server accepts, by role
	// (see Role, EnsureCredentials): a client signs in with a role's seed
	// (Credentials) and gets that role's subjects only; any other client
	// is refused. The server then owns its resources: before it lets any
	// client in, it provisions them (Provision, with Provision's
	// settings) over a connection of its own, and it answers clients'
	// requests for consumers (ServeAgent). JetStream then lives in an
	// account of its own (EngineAccount, with the engine and the admin),
	// the other roles in ClientsAccount, so that no answer on a reply
	// subject a client names reaches a stream or JetStream's API
	// (accounts.go); a StoreDir written without roles keeps its streams.
	// This is how maker nats runs by default.
	Roles RoleKeys
	// MaxConnsPerKey bounds the connections one key (with Roles) holds at
	// once: one more is refused until one of them closes, so the holder
	// of one credential cannot take all the server's connections. 0 means
	// DefaultMaxConnsPerKey.
	MaxConnsPerKey int
	// Provision is the engine's settings for what it provisions (with
	// Roles): the routes' AckWait and MaxDeliver, the lease TTL, the
	// bounds of runs' data. Its Replicas must be 0 or 1 (ErrConfig): the
	// embedded server is a single node.
	Provision ProvisionConfig
	// Token, if set (and Roles not), is required from every client
	// (nats.Token, or nats://TOKEN@host:port). A token gives every holder
	// every subject: prefer Roles.
	Token string
	// SyncAlways makes JetStream fsync every write before acknowledging
	// it, so an acknowledged journal line survives a power loss of this
	// machine; it costs a disk flush per message. Off, JetStream syncs
	// every two minutes, and a single server's power loss may lose the
	// last acknowledged writes (a cluster with 3 replicas does not).
	SyncAlways bool
	// Logger receives the server's log; nil means none.
	Logger *slog.Logger
	// Monitor, if set, is the HOST:PORT of the NATS server's own HTTP
	// monitoring endpoints (/varz, /jsz, /healthz); a port alone means
	// loopback, and a host that is not a loopback one is refused (ErrConfig):
	// the endpoints have no authentication. Empty means none.
	Monitor string
	// Ready bounds how long StartServer waits for the server to accept
	// clients; 0 means 10 seconds.
	Ready time.Duration
}

// Server is an embedded NATS server with JetStream, enough for one machine
// and for tests: a user needs nothing else installed. Several machines
// can share one (workers and coordinators connect to its ClientURL), and a
// real NATS cluster serves the same clients unchanged.
//
// When it dies, clients reconnect and retry until it is back (see
// Connect); JetStream state on StoreDir survives a restart, so journals,
// leases and tasks are kept. Sample jobs and replies live in memory: the
// coordinators ask the ones lost again (see Drawer).
type Server struct {
	ns    *server.Server
	nc    *nats.Conn // the engine's own connection (with Roles)
	agent *Agent
	auth  *roleAuth // with Roles
}

// Validate reports the first setting of c that cannot run as a
// *fielderr.Error wrapping ErrConfig that names the field ("StoreDir",
// "Addr", "Monitor", "Roles" with "Token"; with Roles, "MaxConnsPerKey",
// "Provision.Replicas" or a field of ProvisionConfig by its own name),
// without starting or writing anything. Cost: O(1).
func (c ServerConfig) Validate() error {
	const cfg = "cluster.ServerConfig"
	if c.StoreDir == "" {
		return fielderr.New(cfg, "StoreDir", c.StoreDir, "give the folder JetStream keeps its streams in")
	}
	if fix := listenAddrFix(c.Addr); fix != "" {
		return fielderr.New(cfg, "Addr", c.Addr, fix)
	}
	if err := CheckMonitor(c.Monitor); err != nil {
		return fielderr.Of(cfg, "Monitor", c.Monitor, err)
	}
	if len(c.Roles) == 0 {
		return nil
	}
	switch n := c.Provision.Replicas; {
	case c.Token != "":
		return &fielderr.Error{Config: cfg, Fields: []fielderr.Field{{Name: "Roles"}, {Name: "Token"}}, Fix: "give roles or a token, not both"}
	case c.MaxConnsPerKey < 0:
		return fielderr.New(cfg, "MaxConnsPerKey", c.MaxConnsPerKey, "use 0 (the default) or more")
	case n > 1:
		return fielderr.New(cfg, "Provision.Replicas", n, fmt.Sprintf("the embedded server is a single node and keeps one copy of each stream: use 1; for %d replicas run a cluster of stock nats-server nodes (maker nats config) and provision it with maker nats provision --replicas %d", n, n))
	}
	return c.Provision.Validate()
}

// listenAddrFix is how to fix addr, a listen address where empty means
// DefaultAddr, or "" when it is HOST:PORT with a port from 0 to 65535.
func listenAddrFix(addr string) string {
	_, portText, err := net.SplitHostPort(cmpOr(addr, DefaultAddr))
	if err != nil {
		return "want HOST:PORT such as " + DefaultAddr
	}
	if port, err := strconv.Atoi(portText); err != nil || port < 0 || port > 65535 {
		return "the port must be 0 to 65535"
	}
	return ""
}

// StartServer starts an embedded server and waits until it accepts
// clients. Errors: Validate's, wrapping ErrConfig, or ErrEngine (the
// server failed to start: the port is taken, the store is locked by
// another server).
func StartServer(cfg ServerConfig) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addr := cmpOr(cfg.Addr, DefaultAddr)
	host, portText, _ := net.SplitHostPort(addr) // Validate read them
	port, _ := strconv.Atoi(portText)
	if port == 0 {
		port = server.RANDOM_PORT
	}
	// The streams go with the engine's account: the engine's with roles,
	// NATS's global one without.
	from, to := EngineAccount, globalAccount
	if len(cfg.Roles) > 0 {
		from, to = to, from
	}
	if err := adoptStore(cfg.StoreDir, from, to); err != nil {
		return nil, err
	}
	opts := &server.Options{}
	if len(cfg.Roles) > 0 {
		// JetStream in the engine's account only, the clients in
		// another (accounts.go).
		if err := opts.ProcessConfigString(accountsConfig(nil, nil)); err != nil {
			return nil, fmt.Errorf("%w: the accounts of a server with roles: %w", ErrEngine, err)
		}
	}
	opts.Host, opts.Port = host, port
	opts.JetStream, opts.StoreDir, opts.SyncAlways = true, cfg.StoreDir, cfg.SyncAlways
	opts.Authorization = cfg.Token
	opts.NoSigs, opts.NoLog = true, cfg.Logger == nil
	if err := monitor(opts, cfg.Monitor); err != nil {
		return nil, err
	}
	var auth *roleAuth
	if len(cfg.Roles) > 0 {
		// 256 random bits: a NUID is not secret (its prefix and step show in
		// every handle the agent gives a worker; review11 found the token
		// in 71 guesses).
		auth = newRoleAuth(cfg.Roles, leaseKey()+leaseKey())
		auth.maxPerKey = cmpOr(cfg.MaxConnsPerKey, DefaultMaxConnsPerKey)
		opts.CustomClientAuthentication = auth
		opts.AlwaysEnableNonce = true
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("%w: start the server: %w", ErrEngine, err)
	}
	if auth != nil {
		auth.alive = func(id uint64) bool { return ns.GetClient(id) != nil }
		if auth.engine, err = ns.LookupAccount(EngineAccount); err == nil {
			auth.clients, err = ns.LookupAccount(ClientsAccount)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: the accounts of a server with roles: %w", ErrEngine, err)
		}
	}
	if cfg.Logger != nil {
		ns.SetLogger(slogAdapter{cfg.Logger}, false, false)
	}
	ns.Start()
	ready := cfg.Ready
	if ready <= 0 {
		ready = 10 * time.Second
	}
	if !ns.ReadyForConnections(ready) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("%w: the server at %s did not accept clients within %s (is the port taken, or the store folder used by another server?)", ErrEngine, addr, ready)
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("%w: JetStream did not start on store %s", ErrEngine, cfg.StoreDir)
	}
	srv := &Server{ns: ns, auth: auth}
	if auth != nil {
		if err := srv.provision(cfg, auth, ready); err != nil {
			srv.Shutdown()
			return nil, err
		}
	}
	return srv, nil
}

// provision connects as the engine, provisions the shared resources,
// starts the agent, then lets clients in.
func (s *Server) provision(cfg ServerConfig, auth *roleAuth, ready time.Duration) error {
	nc, err := nats.Connect("", nats.InProcessServer(s.ns), nats.Token(auth.internal), nats.Name("mdap engine"),
		nats.MaxReconnects(-1), nats.ReconnectWait(500*time.Millisecond))
	if err != nil {
		return fmt.Errorf("%w: the engine's own connection: %w", ErrEngine, err)
	}
	s.nc = nc
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrEngine, err)
	}
	pcfg := cfg.Provision
	if pcfg.Logger == nil {
		pcfg.Logger = cfg.Logger
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(ready, agentTimeout))
	defer cancel()
	if err := Provision(ctx, js, pcfg); err != nil {
		return err
	}
	if s.agent, err = ServeAgent(ctx, nc, pcfg); err != nil {
		return err
	}
	auth.open.Store(true)
	return nil
}

// SetRoles replaces the keys a server with roles accepts (a worker
// identity issued or revoked: see AddWorker, RevokeWorker) and closes at
// once every connection signed in with a key no longer accepted for its
// role, so a revoked worker publishes nothing more and cannot sign in
// again. It returns how many connections it closed. Cost: a map walk
// over the connections let in; call it as often as the keys may change
// (maker nats: every second). Errors wrap ErrConfig on a server without
// roles.
func (s *Server) SetRoles(keys RoleKeys) (int, error) {
	if s.auth == nil {
		return 0, fmt.Errorf("%w: the server has no roles", ErrConfig)
	}
	s.auth.prune(func(id uint64) bool { return s.ns.GetClient(id) != nil })
	closed := 0
	for _, id := range s.auth.set(keys) {
		if s.ns.DisconnectClientByID(id) == nil {
			closed++
		}
	}
	return closed, nil
}

// ClientURL is the URL clients connect to, such as nats://127.0.0.1:4222,
// with the port actually bound; loopback when the server listens on every
// interface (clients on other machines use this machine's address).
func (s *Server) ClientURL() string {
	a, ok := s.ns.Addr().(*net.TCPAddr)
	if !ok {
		return s.ns.ClientURL()
	}
	host := "127.0.0.1"
	if !a.IP.IsUnspecified() {
		host = a.IP.String()
	}
	return "nats://" + net.JoinHostPort(host, strconv.Itoa(a.Port))
}

// Shutdown stops the server: clients are disconnected (they keep trying
// to reconnect), JetStream writes its state to StoreDir. It blocks until
// the server is down, and is safe to call more than once.
func (s *Server) Shutdown() {
	if s.agent != nil {
		s.agent.Stop()
	}
	if s.nc != nil {
		s.nc.Close()
	}
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// slogAdapter is the server's logger over slog.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Noticef(f string, v ...any) { a.l.Info(fmt.Sprintf(f, v...)) }
func (a slogAdapter) Warnf(f string, v ...any)   { a.l.Warn(fmt.Sprintf(f, v...)) }
func (a slogAdapter) Fatalf(f string, v ...any)  { a.l.Error(fmt.Sprintf(f, v...)) }
func (a slogAdapter) Errorf(f string, v ...any)  { a.l.Error(fmt.Sprintf(f, v...)) }
func (a slogAdapter) Debugf(f string, v ...any)  { a.l.Debug(fmt.Sprintf(f, v...)) }
func (a slogAdapter) Tracef(f string, v ...any)  { a.l.Debug(fmt.Sprintf(f, v...)) }
