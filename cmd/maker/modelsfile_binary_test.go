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

// TestBinaryModelsFile: --models FILE gives the run its models, each with
// its own server and limits, in the lines form and the JSON form, for
// hanoi, calibrate and a worker; a bad file exits 2 naming the file and
// the line, with nothing written.
func TestBinaryModelsFile(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 1, 0.995
	a, baseA := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	b, baseB := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	lines := write("models.txt", "# two servers\n\nopenai:sim;base="+baseA+";inflight=1\n  openai:sim;base="+baseB+";inflight=2  \n")
	js := write("models.json", "[\n  \"openai:sim;base="+baseA+"\",\n  \"openai:sim;base="+baseB+"\"\n]\n")
	for _, file := range []string{lines, js} {
		beforeA, beforeB := a.Stats().Requests, b.Stats().Requests
		c := start(t, nil, "hanoi", "--disks", "3", "--json", "--progress", "off", "--models", file)
		require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
		require.True(t, c.summary(t).Solved)
		assert.Greater(t, a.Stats().Requests, beforeA, "%s: the first model's server served", file)
		assert.Greater(t, b.Stats().Requests, beforeB, "%s: the second model's server served", file)
	}

	one := write("one.txt", "openai:sim;base="+baseA+";rpm=6000\n")
	c := start(t, nil, "calibrate", "--disks", "10", "--steps-sampled", "5", "--samples", "5", "--progress", "off", "--models", one)
	assert.Contains(t, []int{0, 1}, c.wait(t, time.Minute), "a calibration (1: undecided on 5 of 1,023 steps): %s", c.stderr.String())

	// A worker reads the file too (and serves one model).
	c = start(t, nil, "worker", "--nats", "nats://127.0.0.1:1", "--models", lines)
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "a worker serves one model")

	for file, want := range map[string]string{
		write("bad.txt", "openai:sim;base="+baseA+"\n# ok\nopenai:x;rpm=0\n"): "bad.txt: line 3: \"openai:x;rpm=0\"",
		write("bad.json", "[\n  \"sim\",\n  \"bogus:model\"\n]\n"):            "bad.json: line 3: \"bogus:model\"",
		write("empty.txt", "# nothing\n"):                                     "no model in the file",
		filepath.Join(dir, "missing.txt"):                                     "missing.txt: open",
		dir:                                                                   "a folder",
	} {
		j := filepath.Join(dir, "j.jsonl")
		c := start(t, nil, "hanoi", "--disks", "3", "--progress", "off", "--journal", j, "--models", file)
		assert.Equal(t, 2, c.wait(t, time.Minute), file)
		assert.Contains(t, c.stderr.String(), "--models "+filepath.Dir(file), file)
		assert.Contains(t, c.stderr.String(), want, file)
		assert.Empty(t, c.stdout.String(), file)
		_, err := os.Stat(j)
		assert.True(t, os.IsNotExist(err), "%s: nothing written", file)
	}
}
