package main

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var spentRE = regexp.MustCompile(`\$([0-9.]+) spent of \$([0-9.]+)`)

// TestBinaryCalibrateMaxCost: maker calibrate --max-cost stops at its cap
// (the case: a $0.001 cap billed $51 and exited 0). Against
// serve-sim behind a proxy that adds up what the server billed, a
// calibration that costs more than the cap stops with exit 1, a message
// that says so, and the dollars it spent, which are no more than the cap,
// as is the server's bill: every call's worst case is reserved before it
// starts (docs/cost.md), so no call in flight can pass it. The same
// calibration without the cap draws every sample and bills more than the
// cap, so the cap is what stopped it.
func TestBinaryCalibrateMaxCost(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.Flags = 5, 0.95, withinMaxTokens
	_, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	args := []string{"calibrate", "--disks", "10", "--model", "openai:sim=0.4/1.6", "--steps-sampled", "40", "--samples", "5",
		"--concurrency", "4", "--max-tokens", "200", "--progress", "off"}

	full := newBiller(t, base, 0.4, 1.6)
	c := start(t, nil, append(args, "--base-url", full.URL+"/v1")...)
	// Exit 0 with a k, or 1 undecided (40 steps of a spread-free model
	// cannot rule a spread out): either way a report, every sample drawn.
	code := c.wait(t, 2*time.Minute)
	require.Contains(t, []int{0, 1}, code, c.stderr.String())
	require.Contains(t, c.stdout.String(), "k_min", "a report, not a stop: %s", c.stderr.String())
	wholeBill, calls := full.bill()
	require.Equal(t, 200, calls, "every sample drawn")

	capUSD := wholeBill / 4
	b := newBiller(t, base, 0.4, 1.6)
	c = start(t, nil, append(args, "--base-url", b.URL+"/v1", "--max-cost", fmt.Sprint(capUSD))...)
	require.Equal(t, 1, c.wait(t, 2*time.Minute), "stdout: %s\nstderr: %s", c.stdout.String(), c.stderr.String())
	billed, n := b.bill()
	errOut := c.stderr.String()
	assert.Contains(t, errOut, "calibration stopped at its spending cap after")
	m := spentRE.FindStringSubmatch(errOut)
	require.NotNil(t, m, errOut)
	spent, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.LessOrEqual(t, spent, capUSD, "the spend printed")
	assert.LessOrEqual(t, billed, capUSD, "the server's bill")
	assert.InDelta(t, billed, spent, 1e-5, "what it printed is what the server billed")
	assert.Less(t, n, calls, "it stopped early")
	assert.Greater(t, wholeBill, capUSD)
	t.Logf("cap $%.6f: %d of %d calls, server billed $%.6f, printed $%.6f; uncapped: $%.6f", capUSD, n, calls, billed, spent, wholeBill)
}
