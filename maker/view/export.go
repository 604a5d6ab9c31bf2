package view

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/mdap-go/mdap/internal/atomicfile"
)

// ErrExportPath: an export's file cannot be created where it was asked
// (its folder is missing or not writable).
var ErrExportPath = errors.New("cannot create the export")

// WriteFile writes an export (Run.WritePNG, Run.WriteHTML) to path whole
// or not at all: into a temporary file beside it, renamed over it once
// complete, so a reader never sees half a file and a failed write leaves
// an older file as it was. The file is 0600, as the journal it shows is.
// Errors: ErrExportPath; write's, the file system's.
func WriteFile(path string, write func(io.Writer) error) error {
	err := atomicfile.Write(path, 0o600, write)
	if errors.Is(err, atomicfile.ErrCreate) {
		return fmt.Errorf("%w: %w", ErrExportPath, err)
	}
	return err
}

// ErrNoAuthRemote: a view without a token on an address other machines
// reach.
var ErrNoAuthRemote = errors.New("a view without a token serves on loopback only")

// Guarded is a view's listening socket and the token that guards it,
// made before anything else is (a taken port writes nothing).
type Guarded struct {
	net.Listener
	// Token is the token the view's Handler must check (give it as
	// Config.Token; "" without one): Guarded itself checks no request.
	// Generated says it was made here, for the caller to show once.
	Token     string
	Generated bool
}

// ListenGuarded listens on addr (Listen) for a view guarded by token, or
// by a generated one (NewToken) when token is empty; noAuth serves
// without one, on a loopback addr only. Errors: ErrAddr; ErrNoAuthRemote;
// ErrToken for a token that cannot guard a view (CheckToken); the
// listener's.
func ListenGuarded(addr, token string, noAuth bool) (*Guarded, error) {
	lo, err := Loopback(addr)
	if err != nil {
		return nil, err
	}
	if noAuth && !lo {
		return nil, fmt.Errorf("%w: %s reaches other machines", ErrNoAuthRemote, addr)
	}
	g := &Guarded{}
	if !noAuth {
		if g.Token = token; token == "" {
			g.Token, g.Generated = NewToken(), true
		}
		if err := CheckToken(g.Token); err != nil {
			return nil, err
		}
	}
	if g.Listener, err = Listen(addr); err != nil {
		return nil, err
	}
	return g, nil
}

// Serve serves cfg's view on g (Serve), guarded by g.Token, which it sets
// as cfg.Token, and returns the server, whose Close closes g, and the
// page's URL (http://ADDR/). cfg must hold a Run or a Batch: it panics
// otherwise, a caller's bug (g.Token was checked by ListenGuarded).
func (g *Guarded) Serve(cfg Config) (*Server, string) {
	cfg.Token = g.Token
	h, err := Handler(cfg)
	if err != nil {
		panic(err)
	}
	srv := Serve(g, h)
	return srv, "http://" + srv.Addr() + "/"
}
