package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryPerModelLimits: each --model of an ensemble carries its own
// ;rpm= and ;inflight= (the library test TestPerModelLimits proves the
// bounds hold per model); the run and calibration take them, and a bad
// value exits 2 naming the field, with no journal written.
func TestBinaryPerModelLimits(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 1, 0.995
	a, baseA := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	b, baseB := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	c := start(t, nil, "hanoi", "--disks", "3", "--json", "--progress", "off",
		"--model", "openai:sim;base="+baseA+";inflight=1;rpm=6000", "--model", "openai:sim;base="+baseB+";inflight=2")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	require.True(t, c.summary(t).Solved)
	assert.Positive(t, a.Stats().Requests)
	assert.Positive(t, b.Stats().Requests)

	code, _, errOut := cli(t, "calibrate", "--disks", "10", "--steps-sampled", "10", "--samples", "10", "--progress", "off",
		"--model", "openai:sim;base="+baseA+";rpm=6000;inflight=2")
	assert.Equal(t, 0, code, errOut)

	dir := t.TempDir()
	for spec, want := range map[string]string{
		"openai:sim;base=" + baseA + ";rpm=0":        "rpm=0: use a positive number of calls per minute",
		"openai:sim;base=" + baseA + ";rpm=lots":     "rpm=lots",
		"openai:sim;base=" + baseA + ";inflight=0":   "inflight=0: use a whole number of calls in flight",
		"openai:sim;base=" + baseA + ";inflight=1.5": "inflight=1.5",
		"sim;inflight=2": "rpm= and inflight= limit a served model",
	} {
		j := filepath.Join(dir, "j.jsonl")
		code, out, errOut := cli(t, "hanoi", "--disks", "3", "--progress", "off", "--journal", j, "--model", spec)
		assert.Equal(t, 2, code, spec)
		assert.Contains(t, errOut, want, spec)
		assert.Empty(t, out, spec)
		_, err := os.Stat(j)
		assert.True(t, os.IsNotExist(err), "%s: nothing written", spec)
	}
}
