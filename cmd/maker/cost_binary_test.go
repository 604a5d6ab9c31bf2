package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryMaxCostAgainstAServerThatBills: maker hanoi with --max-cost
// against serve-sim (which bills the prompt once a request and the
// output per choice) stops undecided, exit 1, naming the cap and what was
// spent, having spent no more than the cap; resumed from its journal with
// a larger cap it finishes with the uninterrupted run's steps and totals.
func TestBinaryMaxCostAgainstAServerThatBills(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 9, 0.9, 0
	dir := t.TempDir()
	// One sample a request and several are independent (a server and
	// journals of their own) and wait on the server: they run at once,
	// in a group so that this test's time is theirs.
	t.Run("samples-per-call", func(t *testing.T) {
		for _, per := range []string{"1", "auto"} {
			t.Run(per, func(t *testing.T) {
				t.Parallel()
				_, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
				args := []string{"hanoi", "--disks", "5", "--model", "openai:sim=0.4/1.6", "--base-url", base, "--json", "--progress", "off",
					"--samples-per-call", per, "--max-tokens", "100"}
				whole := filepath.Join(dir, "whole-"+per+".jsonl")
				c := start(t, nil, append(args, "--journal", whole)...)
				require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
				want := c.summary(t)
				require.True(t, want.Solved)
				if per == "auto" {
					assert.Less(t, want.Requests, want.Samples, "fewer requests than samples")
				} else {
					assert.Equal(t, want.Requests, want.Samples)
				}

				for _, frac := range []float64{0.2, 0.6} {
					capUSD := want.Cost * frac
					j := filepath.Join(dir, fmt.Sprintf("capped-%s-%v.jsonl", per, frac))
					c := start(t, nil, append(args, "--journal", j, "--max-cost", fmt.Sprint(capUSD))...)
					require.Equal(t, 1, c.wait(t, 2*time.Minute), c.stderr.String())
					got := c.summary(t)
					assert.False(t, got.Solved)
					assert.LessOrEqual(t, got.Cost, capUSD, "the cap was passed")
					assert.Contains(t, c.stderr.String(), fmt.Sprintf("spending cap $%.4f reached: spent $", capUSD))
					assert.Less(t, got.Steps, want.Steps)

					c = start(t, nil, append(args, "--journal", j, "--resume", "--max-cost", fmt.Sprint(want.Cost*3))...)
					require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
					res := c.summary(t)
					assert.True(t, res.Solved)
					assert.Equal(t, want.Steps, res.Steps)
					assert.Equal(t, want.Valid, res.Valid)
					assert.Equal(t, want.Samples, res.Samples)
					assert.Equal(t, want.OutputTokens, res.OutputTokens)
					if per == "1" {
						// With several samples per request, how a wave is cut
						// into requests depends on the order samples complete,
						// so the prompt tokens paid do; the samples do not.
						assert.Equal(t, want.InputTokens, res.InputTokens)
						assert.InDelta(t, want.Cost, res.Cost, 1e-9)
					}
					assert.Equal(t, decided(t, whole), decided(t, j), "the same winners, keys and votes")
				}
			})
		}
	})
	code, _, errOut := cli(t, "hanoi", "--disks", "3", "--max-cost", "-1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--max-cost -1")
	code, _, errOut = cli(t, "hanoi", "--disks", "3", "--samples-per-call", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--samples-per-call \"0\": use auto, or a number from 1 to 128")
}

// TestBinarySIGKILLMidWaveWithSamplesPerCall kills a run that asks for
// several samples per request, mid-wave, and resumes it: the same steps,
// winners, keys and votes as an uninterrupted run, each step once.
func TestBinarySIGKILLMidWaveWithSamplesPerCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"hanoi", "--disks", "9", "--p", "0.9", "--flag-rate", "0.05", "--seed", "4", "--latency", "2ms",
		"--k", "4", "--samples-per-call", "auto", "--progress", "off", "--json"}
	whole := filepath.Join(dir, "whole.jsonl")
	// The reference, the plain child, runs while the killed runs do (a
	// journal of its own).
	ref := start(t, nil, append(args, "--journal", whole)...)

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	j := filepath.Join(dir, "killed.jsonl")
	kills := 0
	var got *hanoiSummary // the last run's, when it was not killed
	for resume := false; ; resume = true {
		a := append(args, "--journal", j)
		if resume {
			a = append(a, "--resume")
		}
		before := fileSize(j)
		c := startRace(t, nil, a...)
		if kills < 4 {
			require.Eventually(t, func() bool { return fileSize(j) > before || c.exited() }, 30*time.Second, time.Millisecond)
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
			if c.wait(t, time.Minute) == 0 {
				break
			}
			kills++
			continue
		}
		require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
		s := c.summary(t)
		got = &s
		break
	}
	require.Equal(t, 0, ref.wait(t, 2*time.Minute), ref.stderr.String())
	want := ref.summary(t)
	require.True(t, want.Solved)
	require.Less(t, want.Requests, want.Samples)
	if got != nil {
		assert.Equal(t, want.Steps, got.Steps)
		assert.Equal(t, want.Samples, got.Samples)
		assert.Equal(t, want.Valid, got.Valid)
		assert.Equal(t, want.OutputTokens, got.OutputTokens)
		assert.True(t, got.Solved)
	}
	assert.Equal(t, decided(t, whole), decided(t, j))
	assert.Positive(t, kills, "no SIGKILL landed before the run ended: nothing was resumed")
	t.Logf("%d SIGKILLs survived", kills)
}

// TestBinaryEnsembleOfTwoServers: each --model names its own server
// (;base=URL) and price; the ensemble's samples go to both, and each
// model's share is priced at its own price.
func TestBinaryEnsembleOfTwoServers(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 3, 0.95
	a, baseA := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	b, baseB := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	c := start(t, nil, "hanoi", "--disks", "4", "--json", "--progress", "off",
		"--model", "openai:sim=0.4/1.6;base="+baseA, "--model", "openai:sim=0.1/0.4;base="+baseB)
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	sum := c.summary(t)
	require.True(t, sum.Solved)
	require.Len(t, sum.Models, 2)
	assert.Positive(t, a.Stats().Requests)
	assert.Positive(t, b.Stats().Requests)
	assert.Equal(t, uint64(sum.Samples), a.Stats().Requests+b.Stats().Requests)
	code, _, errOut := cli(t, "hanoi", "--disks", "3", "--model", "openai:sim;key=NO_SUCH_VAR_SET")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "NO_SUCH_VAR_SET is not set")
}

// TestCalibrateRanksModelsByDollars: two servers, a reliable dear model
// and an unreliable cheap one; calibrate ranks them by the expected
// dollars of the whole run at the target and names the cheapest.
func TestCalibrateRanksModelsByDollars(t *testing.T) {
	t.Parallel()
	good, bad := sim.DefaultConfig(), sim.DefaultConfig()
	good.Seed, good.P = 1, 0.995
	bad.Seed, bad.P = 2, 0.85
	_, baseGood := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: good})
	_, baseBad := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: bad})
	// Every step of 3-disk Hanoi, 60 samples each: both plans are
	// decided on the steps' own bounds.
	args := []string{"calibrate", "--disks", "3", "--steps-sampled", "7", "--samples", "60", "--progress", "off",
		"--model", "openai:good=0.4/1.6;base=" + baseGood, "--model", "openai:cheap=0.3/1.2;base=" + baseBad}
	code, out, errOut := childCLI(t, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "models by expected dollars for the whole run at the target:")
	code, js, errOut := childCLI(t, append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	var rep calibrate.Report
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	require.Len(t, rep.Models, 2)
	best := rep.Models[0]
	for _, m := range rep.Models {
		require.NotNil(t, m.Plan, m.Model)
		if m.Plan.Cost < best.Plan.Cost {
			best = m
		}
	}
	assert.Contains(t, out, "use "+best.Model+"\n")
	t.Logf("%s", out[strings.Index(out, "models by"):])
}

// TestSolveMaxCostCapsTheWholeBatch: one cap over every task of a batch
// (the sim priced with --price-in/--price-out): the batch stops with
// exit 1 having spent no more than the cap, and its results lines carry
// requests; without the cap it is solved, with fewer requests than
// samples under --samples-per-call auto.
func TestSolveMaxCostCapsTheWholeBatch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, `{"id": "h%d", "hanoi": {"disks": 5}, "seed": %d}`+"\n", i, i)
	}
	tasks := filepath.Join(root, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(b.String()), 0o600))
	// No red flags: the built-in sim's overlong replies bill past
	// max_tokens, which can pass the cap by their excess (docs/cost.md).
	args := []string{"--price-in", "0.4", "--price-out", "1.6", "--flag-rate", "0", "--progress", "off", "--json", "--samples-per-call", "auto", "--k", "4", "--concurrency", "3"}
	solve := func(name string, extra ...string) (int, solveSummary, string) {
		dir := filepath.Join(root, name)
		code, stdout, stderr := cli(t, append(append([]string{"solve", tasks, "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "state")}, args...), extra...)...)
		var sum solveSummary
		require.NoError(t, json.Unmarshal([]byte(stdout), &sum), "%s %s", stdout, stderr)
		return code, sum, stderr
	}
	code, whole, stderr := solve("whole")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 6, whole.Solved)
	assert.Positive(t, whole.Requests)
	assert.Less(t, whole.Requests, whole.Samples, "several samples per request")
	capUSD := whole.Cost / 3
	code, capped, _ := solve("capped", "--max-cost", fmt.Sprint(capUSD))
	assert.Equal(t, 1, code)
	assert.Less(t, capped.Solved, 6)
	assert.LessOrEqual(t, capped.Cost, capUSD, "the whole batch within the cap")
}
