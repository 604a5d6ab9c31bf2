package cluster_test

import (
	"context"
	"fmt"
	"os"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
)

// A whole cluster in one process: an embedded server, a worker serving
// the simulated model, and a coordinator whose solver draws its samples
// through the worker and journals the run on the engine. On several
// machines, each part runs in its own process (maker nats, maker worker,
// maker hanoi --nats URL) and only the URL changes.
func Example() {
	ctx := context.Background()
	store, _ := os.MkdirTemp("", "mdap-nats-")
	defer os.RemoveAll(store)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: store})
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown()

	// The worker: any machine, any number of them.
	wconn, _ := cluster.Connect(srv.ClientURL(), "worker")
	defer wconn.Close()
	wjs, _ := jetstream.New(wconn)
	model, _ := sim.New(hanoi.Oracle{}, sim.DefaultConfig())
	worker, err := cluster.NewWorker(ctx, wjs, model, cluster.WorkerConfig{Inflight: 3})
	if err != nil {
		panic(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- worker.Run(wctx) }()
	defer func() { stop(); <-done }()

	// The coordinator: its model is the workers' route, its journal a
	// stream on the engine.
	conn, _ := cluster.Connect(srv.ClientURL(), "coordinator")
	defer conn.Close()
	js, _ := jetstream.New(conn)
	drawer, err := cluster.NewDrawer(ctx, js, cluster.DrawerConfig{})
	if err != nil {
		panic(err)
	}
	defer drawer.Close()
	remote, _ := drawer.Model(worker.Route())
	journal, err := cluster.CreateJournal(ctx, js, "example", cluster.JournalConfig{})
	if err != nil {
		panic(err)
	}
	task, _ := hanoi.New(4)
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: remote, Journal: journal}
	rep, err := s.Solve(ctx, task)
	if cerr := journal.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		panic(err)
	}
	fmt.Printf("solved %v in %d steps, journal %s\n", task.Solved(), rep.Steps, journal.Path())
	// Output: solved true in 15 steps, journal nats:example
}
