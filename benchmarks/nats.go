package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tmc/langchaingo/llms"
)

// engineWorkers and engineInflight shape OverNATS: two stateless workers,
// each drawing up to four samples at once.
const (
	engineWorkers  = 2
	engineInflight = 4
)

// OverNATS starts an embedded NATS JetStream server on 127.0.0.1 (a free
// port, a temporary store), two maker/cluster workers serving the sim, and
// returns the cluster Drawer's model: every sample is a job on the engine,
// drawn by a worker, its reply sent back, as `maker worker` and `--nats`
// do.
func OverNATS(ctx context.Context, oracle sim.Oracle, cfg sim.Config) (llms.Model, func() error, error) {
	dir, err := os.MkdirTemp("", "mdap-bench-nats-")
	if err != nil {
		return nil, nil, fmt.Errorf("benchmarks: %w", err)
	}
	var closers []func() error
	release := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		errs = append(errs, os.RemoveAll(dir))
		return errors.Join(errs...)
	}
	fail := func(err error) (llms.Model, func() error, error) {
		return nil, nil, errors.Join(fmt.Errorf("benchmarks: nats engine: %w", err), release())
	}
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() error { srv.Shutdown(); return nil })
	connect := func(name string) (jetstream.JetStream, error) {
		nc, err := cluster.Connect(srv.ClientURL(), name)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() error { nc.Close(); return nil })
		return jetstream.New(nc)
	}
	wctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var werr error
	var mu sync.Mutex
	closers = append(closers, func() error {
		stop()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return werr
	})
	local, err := sim.New(oracle, cfg)
	if err != nil {
		return fail(err)
	}
	for i := range engineWorkers {
		js, err := connect(fmt.Sprintf("bench-worker-%d", i))
		if err != nil {
			return fail(err)
		}
		m, err := sim.New(oracle, cfg)
		if err != nil {
			return fail(err)
		}
		w, err := cluster.NewWorker(ctx, js, m, cluster.WorkerConfig{Inflight: engineInflight})
		if err != nil {
			return fail(err)
		}
		wg.Go(func() {
			if err := w.Run(wctx); err != nil {
				mu.Lock()
				werr = errors.Join(werr, err)
				mu.Unlock()
			}
		})
	}
	js, err := connect("bench-drawer")
	if err != nil {
		return fail(err)
	}
	d, err := cluster.NewDrawer(ctx, js, cluster.DrawerConfig{})
	if err != nil {
		return fail(err)
	}
	closers = append(closers, d.Close)
	model, err := d.Model(local.Identity())
	if err != nil {
		return fail(err)
	}
	return model, release, nil
}
