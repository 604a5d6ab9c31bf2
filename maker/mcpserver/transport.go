package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/httpbound"
	"github.com/mdap-go/mdap/internal/loopback"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the streamable HTTP endpoint is served.
const Path = "/mcp"

// ServeIO serves one session over newline-delimited JSON-RPC on r and w
// (for stdio: os.Stdin and os.Stdout), until the client closes r and every
// call read before that has been answered, or ctx ends. A line that is not JSON is answered with a JSON-RPC -32700 parse
// error, one that is JSON but not a message with -32600, one longer than
// Config.MaxRequestBytes with -32600 (id null; the line is dropped as it
// is read, never held whole), and the session goes on.
// A call the client cancelled (notifications/cancelled) gets no response,
// as the MCP spec asks, unless it was sent before the cancellation came.
// Nothing but protocol messages is written to w. Errors: the transport's,
// or ctx.Err() when ctx ended it.
func (s *Server) ServeIO(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	max := int(min(s.cfg.MaxRequestBytes, 1<<30))
	lw := &lockedWriter{w: w, cancels: newCancels(s.log)}
	t := &mcp.IOTransport{Reader: newLineFilter(r, lw, max, ctx.Done()), Writer: lw, MaxLineLength: max}
	err := s.mcp.Run(ctx, t)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil // the client hung up: the normal end
	}
	return err
}

// EventStoreBytes bounds what the streamable HTTP endpoint keeps of its
// streams' events, across all sessions, so that a client whose stream
// broke can resume it (Last-Event-ID) and a stream opens with a priming
// event carrying an id (protocol 2025-11-25). Past it the oldest events
// go first; a client that asks for one of them cannot resume.
const EventStoreBytes = 8 << 20

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Token is the bearer token every request must carry (Authorization:
	// Bearer TOKEN, the scheme in any case); a request without it gets
	// 401, from its headers, before its body is read. Empty needs NoAuth:
	// a loopback port is open to every user of the machine, so there is
	// no unauthenticated default.
	Token string `flag:"token" usage:"with --http, the bearer token every request must carry (default $MDAP_MCP_TOKEN; without either, one is generated and printed on stderr)"`
	// NoAuth serves without a token, when Token is empty: every client
	// that reaches the address may call the tools (and spend the
	// server's model keys).
	NoAuth bool `flag:"no-auth" usage:"with --http, serve without a token: every user of this machine (with --allow-remote, anyone who reaches it) can use the server and its model keys"`
	// Bounds are the HTTP server's limits (ServeHTTPOn): timeouts and the
	// caps on connections and requests in flight (503 past them). A zero
	// field takes its default from DefaultBounds.
	Bounds Bounds
	// SessionTimeout closes a session that received no request for that
	// long; 0 means DefaultSessionTimeout, a negative value never.
	SessionTimeout time.Duration
	// MaxSessions is the most sessions open at once, MaxSessionsPerClient
	// the most one client (one remote IP address) holds. A new session
	// past either cap takes the place of an idle one: the client's own at
	// its cap, else one of the client holding the most sessions (when it
	// holds more than the newcomer); one that never made a call goes
	// first, then the least recently used. Only when none is idle is an
	// initialize refused (503). So one client opening sessions without
	// end cycles through its own and never locks another out. 0 means
	// DefaultMaxSessions and DefaultMaxSessionsPerClient, a negative value
	// no cap.
	MaxSessions, MaxSessionsPerClient int
	// AllowedOrigins are the Origin header values (scheme://host[:port])
	// accepted besides the server's own origin and, on a loopback
	// address, loopback origins. A request with any other Origin gets 403
	// (the MCP spec's defence against DNS rebinding and cross-site
	// calls); a request without one (not from a browser) is not checked.
	AllowedOrigins []string `flag:"allow-origin" usage:"with --http, a browser Origin (scheme://host[:port]) allowed besides the server's own and loopback ones; repeat for several"`
}

// Bounds are the limits of the HTTP server (see HTTPOptions.Bounds).
type Bounds = httpbound.Limits

// The defaults of HTTPOptions.
var (
	// DefaultBounds: as serve-sim's, but a response may take 30 minutes
	// (a run_task or a sample_and_vote call streams its progress).
	DefaultBounds = func() Bounds {
		b := httpbound.Defaults
		b.WriteTimeout = 30 * time.Minute
		return b
	}()
	DefaultSessionTimeout       = 10 * time.Minute
	DefaultMaxSessions          = 256
	DefaultMaxSessionsPerClient = 64
)

// Handler returns the streamable HTTP endpoint (with neither o.Token nor
// o.NoAuth, one that answers every request 401): the SDK's handler, which
// bounds request bodies (Config.MaxRequestBytes, 413 beyond), refuses
// requests to a loopback address that name another host (DNS rebinding)
// and closes sessions idle for o.SessionTimeout; in front of it an Origin
// check (403 for another site's), the bearer-token check when o.Token is
// set (401, before the body is read), and the session caps (see
// HTTPOptions.MaxSessions: an idle session gives way to a new one, 503
// only when none is idle). A call the client cancelled (notifications/cancelled)
// gets no response on its stream, as the MCP spec asks, unless it was sent
// before the cancellation came. Serve it at Path.
func (s *Server) Handler(o HTTPOptions) http.Handler {
	timeout := o.SessionTimeout
	if timeout == 0 {
		timeout = DefaultSessionTimeout
	}
	events := mcp.NewMemoryEventStore(nil)
	events.SetMaxBytes(EventStoreBytes)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              s.log,
		MaxRequestBodyBytes: s.cfg.MaxRequestBytes,
		SessionTimeout:      max(timeout, 0),
		EventStore:          events,
	})
	maxSessions := max(or(o.MaxSessions, DefaultMaxSessions), 0)
	perClient := max(or(o.MaxSessionsPerClient, DefaultMaxSessionsPerClient), 0)
	table := newSessionTable(maxSessions, perClient, s.liveSessions)
	var want [sha256.Size]byte
	if o.Token != "" {
		want = sha256.Sum256([]byte(o.Token))
	}
	cancels := &httpCancels{log: s.log, inFlight: map[httpCall]bool{}, onCall: table.called}
	sessions := table.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancels.serve(h, &retryWriter{ResponseWriter: w}, r, s.cfg.MaxRequestBytes)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, r.Host, o.AllowedOrigins) {
			http.Error(w, fmt.Sprintf("403 forbidden: Origin %q is not this server's; a server started with --allow-origin %s accepts it", origin, origin), http.StatusForbidden)
			return
		}
		if o.Token == "" && !o.NoAuth {
			http.Error(w, "401 unauthorized: this server was given no token (HTTPOptions.Token) and no NoAuth, so it serves no one", http.StatusUnauthorized)
			return
		}
		if o.Token != "" {
			got, ok := bearer(r.Header.Get("Authorization"))
			// Compare digests: equal lengths, so the time says nothing of
			// the token's length either.
			sum := sha256.Sum256([]byte(got))
			if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				w.Header().Set("WWW-Authenticate", challenge(r))
				http.Error(w, "401 unauthorized: this server needs Authorization: Bearer <token>", http.StatusUnauthorized)
				return
			}
		}
		sessions.ServeHTTP(w, r)
	})
}

// sessionHeader carries a streamable HTTP session's ID.
const sessionHeader = "Mcp-Session-Id"

// liveSessions are the server's open sessions by ID.
func (s *Server) liveSessions() map[string]io.Closer {
	m := map[string]io.Closer{}
	for ss := range s.mcp.Sessions() {
		m[ss.ID()] = ss
	}
	return m
}

// bearer returns the credentials of an Authorization header of the Bearer
// scheme, the scheme in any case (RFC 9110: schemes are case-insensitive).
func bearer(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(cred), true
}

// originAllowed accepts the server's own origin (its host is the
// request's Host), a listed one, and a loopback origin when the server is
// reached on loopback.
func originAllowed(origin, host string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null", and anything that is not a web origin
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	return loopbackHost(u.Hostname()) && loopbackHost(hostOnly(host))
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ServeHTTPOn serves the streamable HTTP endpoint at Path on ln, and its
// resource metadata at ResourceMetadataPath, within
// o.Bounds (timeouts; caps on connections and requests, 503 past them),
// until ctx
// ends, then shuts down: it stops accepting, closes the server's sessions
// (which cancels their calls in flight; a cancelled run_task resumes from
// its journal), gives requests a few seconds to end, and closes the rest.
// It returns nil after a shutdown by ctx, otherwise the server's error;
// an error wrapping ErrConfig, before serving, when o has neither a Token
// nor NoAuth.
func (s *Server) ServeHTTPOn(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	if o.Token == "" && !o.NoAuth {
		return fmt.Errorf("%w: HTTPOptions has no Token: give the bearer token clients must send, or set NoAuth to serve every client that reaches %s", ErrConfig, ln.Addr())
	}
	mux := http.NewServeMux()
	mux.Handle(Path, s.Handler(o))
	mux.Handle(ResourceMetadataPath, ResourceMetadataHandler())
	mux.Handle(ResourceMetadataPath+Path, ResourceMetadataHandler())
	b := o.Bounds.WithDefaults(DefaultBounds)
	srv := b.Server(mux)
	ln = b.Listener(ln)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	srv.SetKeepAlivesEnabled(false)
	for ss := range s.mcp.Sessions() {
		_ = ss.Close() // ends the sessions' event streams
	}
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close() // long-lived event streams never go idle
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ListenAddr returns the address to listen on for addr (HOST:PORT, or
// :PORT). Without allowRemote the host must be a loopback one (127.0.0.1,
// ::1, localhost), and an empty host means 127.0.0.1; with allowRemote any
// host goes, and an empty one means every interface. Errors wrap
// ErrListenAddr.
func ListenAddr(addr string, allowRemote bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v; want HOST:PORT or :PORT, e.g. 127.0.0.1:8080 or :0", ErrListenAddr, addr, err)
	}
	if allowRemote {
		return addr, nil
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port), nil
	}
	if loopback.Host(host) {
		return addr, nil
	}
	return "", fmt.Errorf("%w: %q is not a loopback address; the server listens on loopback only (127.0.0.1, ::1, localhost) unless its operator allows remote clients (--allow-remote, best with --token)", ErrListenAddr, addr)
}
