package multiply_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary a child that solves killProblem with
// the journal it names, for the kill test.
const childEnv = "MDAP_DECOMPOSE_CHILD_JOURNAL"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		if _, err := solveKillProblem(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(statetest.Main(m)) // a state folder of its own (journal keys, chain heads), the children's too
}

// solveKillProblem solves a 5×5 multiplication on a sim with latency and
// red flags, with a signed journal at path ("" for none).
func solveKillProblem(path string) (*decompose.Result, error) {
	fam := multiply.Family{}
	sc := simConfig(21, 0.85, 2, 0)
	sc.Latency = sim.UniformLatency(time.Millisecond, 4*time.Millisecond)
	sc.FlagRate = 0.05
	sims, err := decompose.NewSim(fam, fam, sc)
	if err != nil {
		return nil, err
	}
	st := decompose.Settings{Discriminate: true}
	st.Solver.Price = price
	return decompose.Solve(context.Background(), fam, multiply.Generate(21, 5, 5),
		decompose.Config{Settings: st, Models: sims.Models(), Truth: fam, CoFailures: sims, Journal: path})
}

// A tree killed (SIGKILL) at random points resumes to the uninterrupted
// result, and no journaled decision is decided (journaled) again.
func TestKilledTreeResumesToTheUninterruptedResult(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	t.Setenv(journal.KeyEnv, "kill-test-key-0123456789abcdef")
	want, err := solveKillProblem("")
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill times seeded with %d", seed)
	rng := rand.New(rand.NewPCG(seed, 38))
	decisions := 0
	for _, st := range want.Roles {
		decisions += st.Decisions
	}
	resumed, killedMidway := 0, 0
	for trial := range 3 {
		path := filepath.Join(t.TempDir(), "tree.journal")
		for range 3 {
			// Kill when the journal holds a random number of lines (a
			// random point of the tree), plus a random few milliseconds.
			at := 1 + rng.IntN(decisions)
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+path)
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			killed := false
			for !killed {
				select {
				case <-done:
					killed = true // it ended by itself
				case <-time.After(time.Millisecond):
					if b, _ := os.ReadFile(path); bytes.Count(b, []byte("\n")) > at {
						time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
						_ = cmd.Process.Signal(syscall.SIGKILL)
						if err := <-done; err != nil {
							killedMidway++
						}
						killed = true
					}
				}
			}
		}
		got, err := solveKillProblem(path)
		require.NoError(t, err, "trial %d", trial)
		resumed += got.Resumed
		assert.Equal(t, want.Answer, got.Answer)
		assert.Equal(t, want.Samples, got.Samples)
		assert.Equal(t, want.Nodes, got.Nodes)
		assert.InDelta(t, want.Cost, got.Cost, 1e-9)
		for r, st := range want.Roles {
			g := got.Roles[r]
			assert.Equal(t, []int{st.Decisions, st.Samples, st.Wrong}, []int{g.Decisions, g.Samples, g.Wrong}, "role %s", r)
		}
		seen, lines := map[string]bool{}, 0
		f, err := os.Open(path)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if lines++; lines == 1 {
				continue // the header
			}
			var rec decompose.Record
			require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
			key := rec.Node + "|" + string(rec.Role) + "|" + rec.Part
			assert.False(t, seen[key], "decided twice: %s", key)
			seen[key] = true
		}
		f.Close()
		assert.Equal(t, decisions, len(seen), "every decision journaled once")
	}
	t.Logf("%d of 9 children killed before they ended; %d decisions resumed from journals", killedMidway, resumed)
	assert.Positive(t, killedMidway)
	assert.Positive(t, resumed)
}
