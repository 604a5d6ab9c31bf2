package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
