package cluster

import (
	"context"

	"github.com/mdap-go/mdap/internal/words"
	"github.com/tmc/langchaingo/llms"
)

// ServeWorker opens the worker of model as cfg describes it (OpenWorker,
// within SetupTimeout), calls started with it, says through notef what
// it serves (the route, the engine, its calls at a time, the ack wait in
// force), runs it until ctx ends (Worker.Run, which lets calls in
// progress finish within cfg.Grace), then says what it did (its
// WorkerStats) and closes it.
//
// Errors: OpenWorker's as they are (ErrConfig: the settings or the
// credential, before any connection); started's as it returned it; Run's
// as a *FieldFailure of no field (a failure of the worker, not of a
// setting), said after its stats.
func ServeWorker(ctx context.Context, model llms.Model, cfg WorkerConfig, notef func(format string, args ...any), started func(*Worker) error) error {
	octx, cancel := context.WithTimeout(ctx, SetupTimeout)
	w, err := OpenWorker(octx, model, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := started(w); err != nil {
		return err
	}
	notef("serving %q from %s, %s at a time, jobs of a dead worker back after %s; stop with Ctrl-C", w.route, cfg.URL, words.Plural(max(cfg.Inflight, 1), "call"), w.AckWait())
	err = w.Run(ctx)
	st := w.Stats()
	notef("stopped: served %d (%d failed), withdrawn %d, handed back %d, redelivered to it %d", st.Served, st.Failed, st.Withdrawn, st.Released, st.Redelivered)
	return failedAt("", err)
}
