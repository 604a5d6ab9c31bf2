package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/loopback"
)

// ErrListen: ListenHTTP could not listen on its address (taken, or not
// this machine's).
var ErrListen = errors.New("cannot listen")

// HTTPListener is the streamable HTTP endpoint's listening socket and
// the options it is to be served with (ListenHTTP), made before the
// server starts, so that a taken port is refused before anything runs.
type HTTPListener struct {
	net.Listener
	// Options are the options given, with a generated Token when they
	// had neither a Token nor NoAuth.
	Options HTTPOptions
	// Generated says the Token was generated here: the caller shows it
	// once to the operator, who gives it to the clients.
	Generated bool
}

// ListenHTTP listens on addr as ListenAddr reads it (loopback unless
// allowRemote; an empty host is 127.0.0.1, or every interface with
// allowRemote) for ServeHTTPOn with o: with neither o.Token nor o.NoAuth
// a Token of 256 random bits is generated (NewToken), so the endpoint is
// never open by default. Serve it with Server.ServeHTTPOn(ctx, l,
// l.Options), which closes it.
//
// Errors: ListenAddr's (ErrListenAddr); NewToken's; the socket's,
// wrapping ErrListen. Nothing is left open on an error.
func ListenHTTP(addr string, allowRemote bool, o HTTPOptions) (*HTTPListener, error) {
	addr, err := ListenAddr(addr, allowRemote)
	if err != nil {
		return nil, err
	}
	l := &HTTPListener{Options: o}
	if o.Token == "" && !o.NoAuth {
		if l.Options.Token, err = NewToken(); err != nil {
			return nil, err
		}
		l.Generated = true
	}
	if l.Listener, err = net.Listen("tcp", addr); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrListen, err)
	}
	return l, nil
}

// ServeStdio serves one session over r and w as ServeIO does, for a
// reader and a writer that need not close (a command's stdin and
// stdout): r is closed when it is an io.Closer, w never.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	rc, ok := r.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(r)
	}
	return s.ServeIO(ctx, rc, nopWriteCloser{w})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// HTTPConfig is how a command reaches its Server: streamable HTTP at
// Addr (ListenHTTP's addr and allowRemote, and its options), or stdio
// when Addr is empty.
type HTTPConfig struct {
	Addr        string `flag:"http" usage:"serve streamable HTTP at ADDR (HOST:PORT or :PORT; :0 picks a free port, printed on stdout) instead of stdio"`
	AllowRemote bool   `flag:"allow-remote" usage:"with --http, listen on a non-loopback address (an empty host then means every interface); the bearer token is then all that guards the server"`
	HTTPOptions
}

// Validate refuses AllowRemote, Token or NoAuth without an Addr (over
// stdio the client that starts the server is trusted), and NoAuth with a
// Token, as a *fielderr.Error wrapping ErrConfig whose values are nil
// (the token is never quoted). It opens nothing. Cost: O(1).
func (c HTTPConfig) Validate() error {
	bad := func(name, fix string) error { return fielderr.New("mcpserver.HTTPConfig", name, nil, fix) }
	stdio := "applies to Addr only: over stdio the client that starts the server is trusted"
	switch {
	case c.Addr == "" && c.Token != "":
		return bad("Token", stdio)
	case c.Addr == "" && c.AllowRemote:
		return bad("AllowRemote", stdio)
	case c.Addr == "" && c.NoAuth:
		return bad("NoAuth", stdio)
	case c.NoAuth && c.Token != "":
		return &fielderr.Error{Config: "mcpserver.HTTPConfig", Fields: []fielderr.Field{{Name: "NoAuth"}, {Name: "Token"}}, Fix: "contradict each other: drop one"}
	}
	return nil
}

// Listen checks c (Validate's errors), then for an Addr is ListenHTTP
// (its errors), and for stdio nil.
func (c HTTPConfig) Listen() (*HTTPListener, error) {
	if err := c.Validate(); err != nil || c.Addr == "" {
		return nil, err
	}
	return ListenHTTP(c.Addr, c.AllowRemote, c.HTTPOptions)
}

// Serve serves s over ln (Listen's, which it closes) until ctx ends, or
// over stdin and stdout when ln is nil, until the client leaves. It logs
// (Config.Logger, at Info) where it serves, its models, root, state
// folder, tool policy and, over HTTP, how clients authenticate; and warns
// when nothing does (NoAuth). Errors: ServeStdio's, ServeHTTPOn's.
func (s *Server) Serve(ctx context.Context, ln *HTTPListener, stdin io.Reader, stdout io.Writer) error {
	c := &s.cfg
	attrs := []any{"models", strings.Join(c.Models, ","), "root", c.Root, "state", c.State, "tools", c.Policy.String()}
	if ln == nil {
		s.log.Info("serving MCP over stdio", attrs...)
		return s.ServeStdio(ctx, stdin, stdout)
	}
	// "auth", not "token": an attribute named token is redacted whatever its value.
	auth := "bearer token"
	switch {
	case ln.Options.NoAuth:
		auth = "none"
		reach := "anyone who can reach " + ln.Addr().String()
		if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil && loopback.Host(host) {
			reach = "every user and process of this machine"
		}
		s.log.Warn("serving without a token: " + reach + " can use this server, and run_task and sample_and_vote spend its model keys")
	case ln.Generated:
		auth = "bearer token (generated)"
	}
	s.log.Info("serving MCP over streamable HTTP", append([]any{"addr", ln.Addr().String(), "auth", auth}, attrs...)...)
	return s.ServeHTTPOn(ctx, ln, ln.Options)
}
