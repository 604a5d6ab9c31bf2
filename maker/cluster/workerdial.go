package cluster

import (
	"context"

	"github.com/tmc/langchaingo/llms"
)

// OpenWorker connects to the engine at cfg.URL as a worker signed in
// with cfg.Creds (Dial, named "maker worker") and makes the Worker of
// model there (NewWorker, within ctx). The Worker owns the connection:
// Close closes it once Run has returned. Errors: cfg.Validate's
// *fielderr.Error and SignIn's, wrapping ErrConfig, before any
// connection; then Dial's and NewWorker's. On an error nothing stays
// open.
func OpenWorker(ctx context.Context, model llms.Model, cfg WorkerConfig) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	nc, js, err := Dial(cfg.URL, cfg.Creds, RoleWorker, "maker worker")
	if err != nil {
		return nil, err
	}
	w, err := NewWorker(ctx, js, model, cfg)
	if err != nil {
		nc.Close()
		return nil, err
	}
	w.owned = true
	return w, nil
}

// Connected is nil while the worker's connection is up, else an error
// naming its status: a readiness probe. It costs no request.
func (w *Worker) Connected() error { return connected(w.nc) }

// Close flushes and closes the connection OpenWorker opened; a Worker of
// NewWorker leaves its caller's connection open. Call it after Run has
// returned; it is safe to call more than once.
func (w *Worker) Close() {
	if w.owned {
		_ = w.nc.Flush()
		w.nc.Close()
	}
}
