package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// CredsEvery is how often an Engine reads its credentials folder again.
const CredsEvery = time.Second

// Engine is an embedded engine running as an EngineConfig describes it
// (StartEngine): its server, and with AuthRoles its credentials folder,
// read again every CredsEvery so that an identity issued is let in and
// one revoked is cut off (EngineCreds.Watch).
type Engine struct {
	*Server
	// Creds is the credentials folder and what it accepts; its Dir is
	// empty with AuthToken (no folder, no watch).
	Creds EngineCreds
	// Made are the roles whose keys StartEngine made (none: all kept).
	Made []Role
	// StoreDir is the absolute folder JetStream keeps its streams in.
	StoreDir string

	stopWatch context.CancelFunc
	waitWatch func()
	stopped   sync.Once
}

// StartEngine validates c, makes its credentials folder's missing keys,
// starts its server with logger for the server's log (nil: none), and
// with AuthRoles watches the folder until Stop, calling report (if set)
// as EngineCreds.Watch does, from the watching goroutine, with a failed
// reading's error beginning "reading DIR: ". Errors are
// EngineConfig.ServerConfig's (ErrConfig: a *fielderr.Error naming the
// field; ErrAuth: the folder) and StartServer's. The caller calls Stop.
func StartEngine(c EngineConfig, logger *slog.Logger, report func(closed int, err error)) (*Engine, error) {
	cfg, creds, made, err := c.ServerConfig()
	if err != nil {
		return nil, err
	}
	cfg.Logger = logger
	srv, err := StartServer(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{Server: srv, Creds: creds, Made: made, StoreDir: cfg.StoreDir, stopWatch: cancel, waitWatch: func() {}}
	if creds.Dir != "" {
		e.waitWatch = creds.Watch(ctx, srv, CredsEvery, func(closed int, err error) {
			if err != nil {
				err = fmt.Errorf("reading %s: %w", creds.Dir, err)
			}
			if report != nil {
				report(closed, err)
			}
		})
	}
	return e, nil
}

// Stop ends the watch of the credentials folder and waits for it, then
// shuts the server down. It is safe to call more than once.
func (e *Engine) Stop() {
	e.stopped.Do(func() {
		e.stopWatch()
		e.waitWatch()
		e.Server.Shutdown()
	})
}

// Shutdown is Stop, so that the *Server method Engine would otherwise
// promote cannot leave the credentials watch running for a server that is
// gone (writing keys into the folder every CredsEvery).
func (e *Engine) Shutdown() { e.Stop() }
