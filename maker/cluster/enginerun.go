package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// RunEngine starts the embedded engine c describes (StartEngine, its
// server's log to logger, nil for none), calls started with it, then
// says through notef where it serves, where its store and its monitoring
// endpoints are and what its clients sign in with (EngineCreds.Note),
// writes its client URL to out last (a client that read it finds the
// notes written), and serves until ctx ends; it says "stopping" and stops
// the engine before it returns. While it serves, the watch of the
// credentials folder says through notef each key revoked and each
// reading of the folder that failed (the keys in force are kept).
//
// Errors: StartEngine's (ErrConfig: a *fielderr.Error naming the field;
// ErrAuth: the credentials folder), or started's as it returned it, the
// engine stopped.
func RunEngine(ctx context.Context, c EngineConfig, logger *slog.Logger, out io.Writer, notef func(format string, args ...any), started func(*Engine) error) error {
	e, err := StartEngine(c, logger, func(closed int, err error) {
		if err != nil {
			notef("%v (the keys in force are kept)", err)
			return
		}
		notef("a key was revoked: closed %d connection(s) signed in with it", closed)
	})
	if err != nil {
		return err
	}
	defer e.Stop()
	if err := started(e); err != nil {
		return err
	}
	if u := e.MonitorURL(); u != "" {
		notef("the NATS server's monitoring endpoints at %s (/varz, /jsz, /healthz)", u)
	}
	notef("JetStream serving %s, store %s; stop with Ctrl-C", e.ClientURL(), e.StoreDir)
	notef("%s", e.Creds.Note(e.Made))
	fmt.Fprintln(out, e.ClientURL())
	<-ctx.Done()
	notef("stopping")
	return nil
}
