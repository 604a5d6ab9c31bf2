package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker worker --model sim --roles multiply plays every role of a
// multiplication's voted decomposition: maker solve --nats --model sim
// solves a multiply line on two such workers (binaries both). The line's
// decisions are journaled on the engine: a coordinator interrupted
// mid-tree (SIGINT, exit 130) and run again resumes them ("replayed from
// the journals") and ends with the uninterrupted run's answer and
// samples. --roles with a real --model, or an unknown family, exits 2.
func TestBinaryWorkerPlaysRolesOverNATS(t *testing.T) {
	t.Parallel()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	for range 2 {
		w := start(t, nil, "worker", "--nats", srv.ClientURL(), "--model", "sim", "--roles", "multiply", "--seed", "3", "--p", "0.9",
			"--inflight", "16", "--latency", "4ms")
		defer func() {
			_ = w.cmd.Process.Signal(syscall.SIGINT)
			assert.Equal(t, 0, w.wait(t, time.Minute), w.stderr.String())
		}()
		require.Eventually(t, func() bool { return strings.Contains(w.stderr.String(), "serving") || w.exited() },
			time.Minute, 10*time.Millisecond)
		require.Contains(t, w.stderr.String(), `serving "sim-roles:multiply`, "the route names the family")
	}

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "m", "multiply": {"a": "83184790", "b": "20802494"}}`+"\n"), 0o644))
	solve := func(queue string) []string {
		return []string{"solve", tasks, "--out", filepath.Join(dir, queue+".jsonl"), "--queue", queue, "--nats", srv.ClientURL(),
			"--seed", "3", "--p", "0.9", "--progress", "off"}
	}
	c := start(t, nil, solve("whole")...)
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	want := readResults(t, filepath.Join(dir, "whole.jsonl"))["id:m"]
	require.Equal(t, batch.StatusSolved, want.Status, want.Error)
	assert.JSONEq(t, `"1730451094866260"`, string(want.Answer))

	// Interrupted once some of its decisions are on the engine.
	nc, err := cluster.Connect(srv.ClientURL(), "test")
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	journaled := func() int {
		st, err := js.Stream(context.Background(), cluster.JournalsStream)
		if err != nil {
			return 0
		}
		info, err := st.Info(context.Background(), jetstream.WithSubjectFilter("mdap.journals.cut.>"))
		if err != nil {
			return 0
		}
		n := 0
		for _, k := range info.State.Subjects {
			n += int(k)
		}
		return n
	}
	c = start(t, nil, solve("cut")...)
	require.Eventually(t, func() bool { return journaled() >= 10 || c.exited() }, time.Minute, 5*time.Millisecond)
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT), "the run ended before the signal")
	require.Equal(t, 130, c.wait(t, time.Minute), c.stderr.String())
	c = start(t, nil, solve("cut")...)
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	assert.Contains(t, c.stdout.String(), "replayed from the journals on the engine")
	got := readResults(t, filepath.Join(dir, "cut.jsonl"))["id:m"]
	assert.Equal(t, batch.StatusSolved, got.Status, got.Error)
	assert.Equal(t, string(want.Answer), string(got.Answer))
	assert.Equal(t, want.Samples, got.Samples, "the uninterrupted run's samples")

	for _, args := range [][]string{
		{"worker", "--nats", srv.ClientURL(), "--model", "openai:gpt-4.1", "--roles", "multiply"},
		{"worker", "--nats", srv.ClientURL(), "--model", "sim", "--roles", "hanoi"},
	} {
		c := start(t, nil, args...)
		assert.Equal(t, 2, c.wait(t, time.Minute), "%v: %s", args, c.stderr.String())
		assert.Contains(t, c.stderr.String(), "--roles")
	}
}
