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
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the streamable HTTP endpoint is served.
const Path = "/mcp"

// ServeIO serves one session over newline-delimited JSON-RPC on r and w
// (for stdio: os.Stdin and os.Stdout), until the client closes r or ctx
// ends. A message longer than Config.MaxRequestBytes ends the session.
// Nothing but protocol messages is written to w. Errors: the transport's,
// or ctx.Err() when ctx ended it.
func (s *Server) ServeIO(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	t := &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: int(min(s.cfg.MaxRequestBytes, 1<<30))}
	err := s.mcp.Run(ctx, t)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil // the client hung up: the normal end
	}
	return err
}

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Token, if set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN); a request without it gets 401.
	Token string
}

// Handler returns the streamable HTTP endpoint: the SDK's handler, which
// bounds request bodies (Config.MaxRequestBytes, 413 beyond) and refuses
// requests to a loopback address that name another host (DNS rebinding),
// behind a bearer-token check when o.Token is set. Serve it at Path.
func (s *Server) Handler(o HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              s.log,
		MaxRequestBodyBytes: s.cfg.MaxRequestBytes,
	})
	if o.Token == "" {
		return h
	}
	want := sha256.Sum256([]byte(o.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		// Compare digests: equal lengths, so the time says nothing of
		// the token's length either.
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mdap"`)
			http.Error(w, "401 unauthorized: this server needs Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServeHTTPOn serves the streamable HTTP endpoint at Path on ln until ctx
// ends, then shuts down: it stops accepting, closes the server's sessions
// (which cancels their calls in flight; a cancelled run_task resumes from
// its journal), gives requests a few seconds to end, and closes the rest.
// It returns nil after a shutdown by ctx, otherwise the server's error.
func (s *Server) ServeHTTPOn(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	mux := http.NewServeMux()
	mux.Handle(Path, s.Handler(o))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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
	if host == "localhost" {
		return addr, nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return addr, nil
	}
	return "", fmt.Errorf("%w: %q is not a loopback address; the server listens on loopback only (127.0.0.1, ::1, localhost) unless its operator allows remote clients (--allow-remote, best with --token)", ErrListenAddr, addr)
}
