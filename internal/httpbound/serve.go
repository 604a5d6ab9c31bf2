package httpbound

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Running is a server that l bounds, serving on its listener in a
// goroutine it owns until Close.
type Running struct {
	ln   *Listener
	srv  *http.Server
	done chan error
}

// Serve serves h on ln within l (its connection cap on ln, its timeouts,
// header bound and in-flight cap on the server) in a goroutine of its own.
// Each request's context derives from ctx: cancel ctx to end long-lived
// requests (event streams) before Close.
func (l Limits) Serve(ctx context.Context, ln net.Listener, h http.Handler) *Running {
	r := &Running{ln: l.Listener(ln), srv: l.Server(h), done: make(chan error, 1)}
	r.srv.BaseContext = func(net.Listener) context.Context { return ctx }
	go func() { r.done <- r.srv.Serve(r.ln) }()
	return r
}

// Addr is the address the server listens on (with the port chosen, for
// port 0).
func (r *Running) Addr() string { return r.ln.Addr().String() }

// Close stops the server, letting requests in progress finish for up to a
// second (then cutting them), and waits for its goroutine. Errors: the
// server's, other than its being closed.
func (r *Running) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = r.srv.Close()
	}
	if serr := <-r.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// Listener is the bounded listener the server accepts on: its Open and
// Refused counts.
func (r *Running) Listener() *Listener { return r.ln }
