package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelsFileComesAfterTheModelFlags covers docs/cost.md:200-201: a
// models file's "specs come after the --model flags given (they replace
// the default `sim`)", and :190-191 and :205, --models is "for hanoi, run, solve,
// calibrate and worker" while "maker mcp keeps its own --model list".
func TestModelsFileComesAfterTheModelFlags(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 1, 0.995
	a, baseA := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	_, baseB := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	dir := t.TempDir()
	file := filepath.Join(dir, "models.txt")
	require.NoError(t, os.WriteFile(file, []byte("openai:from-file;base="+baseB+"\n"), 0o600))
	names := func(s hanoiSummary) []string {
		var out []string
		for _, m := range s.Models {
			out = append(out, m.Model)
		}
		return out
	}

	code, s := hanoiJSON(t, "--disks", "3", "--model", "openai:from-flag;base="+baseA, "--models", file)
	require.Equal(t, 0, code, "%+v", s)
	assert.Equal(t, []string{"openai:from-flag@" + baseA, "openai:from-file@" + baseB}, names(s), "the flag's model first, the file's after it")

	before := a.Stats().Requests
	code, s = hanoiJSON(t, "--disks", "3", "--models", file)
	require.Equal(t, 0, code, "%+v", s)
	assert.Equal(t, []string{"openai:from-file@" + baseB}, names(s), "the file replaces the default sim")
	assert.Equal(t, before, a.Stats().Requests)

	// Each command named reads the flag (a missing file is its error, not
	// an unknown flag); mcp does not take it.
	missing := filepath.Join(dir, "missing.txt")
	for _, cmd := range [][]string{
		{"hanoi", "--disks", "3"},
		{"run", filepath.Join(dir, "spec.json")},
		{"solve", filepath.Join(dir, "tasks.jsonl"), "--out", filepath.Join(dir, "out.jsonl")},
		{"calibrate", "--disks", "5"},
		{"worker", "--nats", "nats://127.0.0.1:1"},
	} {
		code, out, errOut := cli(t, append(cmd, "--models", missing)...)
		assert.Equal(t, 2, code, "%v: %s", cmd, errOut)
		assert.Contains(t, errOut, "--models "+missing, "%v", cmd)
		assert.Empty(t, out, "%v", cmd)
	}
	code, _, errOut := cli(t, "mcp", "--models", file)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "unknown flag: --models")
}
