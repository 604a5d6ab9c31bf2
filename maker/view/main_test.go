package view_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

// TestMain gives the tests a state folder of their own (journal keys and
// chain heads), never the user's.
func TestMain(m *testing.M) { os.Exit(statetest.Main(m)) }

// solver is a Solver of the simulated model with red flags and wrong
// answers enough to colour a map.
func solver(t testing.TB) *maker.Solver {
	c := sim.DefaultConfig()
	c.Seed, c.P, c.FlagRate = 7, 0.9, 0.05
	m, err := sim.New(hanoi.Oracle{}, c)
	require.NoError(t, err)
	return &maker.Solver{Model: m, Config: maker.Config{Vote: vote.Config{K: 3}}}
}

// realJournal runs Hanoi with disks disks into a journal file, with a
// checkpoint every 100 steps, and returns its path, its lines and the
// run's report.
func realJournal(t testing.TB, disks int) (string, [][]byte, *maker.Report) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	j.CheckpointEvery = 100
	s := solver(t)
	s.Journal = j
	task, err := hanoi.New(disks)
	require.NoError(t, err)
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, append(bytes.Clone(sc.Bytes()), '\n'))
	}
	return path, lines, &rep
}

// appendLines appends lines to the file at path (made 0600 if new).
func appendLines(t testing.TB, path string, lines ...[]byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	require.NoError(t, err)
	for _, l := range lines {
		_, err := f.Write(l)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
}
