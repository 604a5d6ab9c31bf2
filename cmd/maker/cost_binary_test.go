package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 9, 0.9, 0
	_, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	dir := t.TempDir()
	for _, per := range []string{"1", "auto"} {
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
	}
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
	dir := t.TempDir()
	args := []string{"hanoi", "--disks", "9", "--p", "0.9", "--flag-rate", "0.05", "--seed", "4", "--latency", "2ms",
		"--k", "4", "--samples-per-call", "auto", "--progress", "off", "--json"}
	whole := filepath.Join(dir, "whole.jsonl")
	c := start(t, nil, append(args, "--journal", whole)...)
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	want := c.summary(t)
	require.True(t, want.Solved)
	require.Less(t, want.Requests, want.Samples)

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	j := filepath.Join(dir, "killed.jsonl")
	kills := 0
	for resume := false; ; resume = true {
		a := append(args, "--journal", j)
		if resume {
			a = append(a, "--resume")
		}
		before := fileSize(j)
		c := start(t, nil, a...)
		if kills < 4 {
			require.Eventually(t, func() bool { return fileSize(j) > before || c.cmd.ProcessState != nil }, 30*time.Second, time.Millisecond)
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
			if c.wait(t, time.Minute) == 0 {
				break
			}
			kills++
			continue
		}
		require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
		got := c.summary(t)
		assert.Equal(t, want.Steps, got.Steps)
		assert.Equal(t, want.Samples, got.Samples)
		assert.Equal(t, want.Valid, got.Valid)
		assert.Equal(t, want.OutputTokens, got.OutputTokens)
		assert.True(t, got.Solved)
		break
	}
	assert.Equal(t, decided(t, whole), decided(t, j))
	t.Logf("%d SIGKILLs survived", kills)
}
