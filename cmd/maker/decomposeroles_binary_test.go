package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roleCosts runs maker multiply on a seeded 3×3 problem with args and
// returns each role's samples and cost.
func roleCosts(t *testing.T, args ...string) map[string][2]float64 {
	t.Helper()
	c := start(t, nil, append([]string{"multiply", "--digits", "3", "--seed", "4", "--json"}, args...)...)
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	var s struct {
		Roles map[string]struct {
			Samples int     `json:"samples"`
			Cost    float64 `json:"cost"`
		} `json:"roles"`
	}
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s), c.stdout.String())
	out := map[string][2]float64{}
	for r, st := range s.Roles {
		out[r] = [2]float64{float64(st.Samples), st.Cost}
	}
	return out
}

// --price gives each role its own price: a role's cost scales with its
// price alone, and no decision changes.
func TestBinaryMultiplyPricesEachRole(t *testing.T) {
	t.Parallel()
	free := roleCosts(t)
	flat := roleCosts(t, "--price", "all=1/1")
	own := roleCosts(t, "--price", "all=1/1,solve=3/3")
	require.NotEmpty(t, flat)
	for r, f := range flat {
		assert.Equal(t, free[r][0], f[0], r)
		assert.Equal(t, f[0], own[r][0], "%s: prices change no decision", r)
		assert.Zero(t, free[r][1], "%s: the simulated model is free without --price", r)
		require.Positive(t, f[1], r)
		want := f[1]
		if r == "solve" {
			want = 3 * f[1]
		}
		assert.InDelta(t, want, own[r][1], 1e-12, r)
	}
	for _, args := range [][]string{
		{"--price", "solve=x"},
		{"--price", "nobody=1/1"},
		{"--price", "solve=-1/1"},
		{"--model-solve", "openai:some-model", "--base-url", "http://127.0.0.1:1/v1"}, // the others are the sim
	} {
		c := start(t, nil, append([]string{"multiply", "--digits", "3"}, args...)...)
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", args, c.stderr.String())
		assert.Empty(t, c.stdout.String())
	}
}

// maker calibrate --roles measures each role's p: on the simulated model
// at --p 0.8, every role's estimate is near it, its lower bound below it.
func TestBinaryCalibrateRoles(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "calibrate", "--roles", "sort", "--roles-size", "12", "--roles-problems", "2", "--samples", "8", "--p", "0.8", "--json")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	var s struct {
		Family string             `json:"family"`
		Valid  map[string]int     `json:"valid"`
		P      map[string]float64 `json:"p"`
		Lower  map[string]float64 `json:"lower"`
	}
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s), c.stdout.String())
	assert.Equal(t, "sort", s.Family)
	for _, r := range []string{"atomic", "decompose", "discriminate", "solve", "compose"} {
		assert.Greater(t, s.Valid[r], 50, r)
		assert.InDelta(t, 0.8, s.P[r], 0.12, r)
		assert.Less(t, s.Lower[r], s.P[r], r)
	}
	for _, args := range [][]string{
		{"calibrate", "--roles", "hanoi"},
		{"calibrate", "--roles", "sort", "--disks", "3"},
		{"calibrate", "--roles-size", "3"},
		{"calibrate", "--roles", "multiply", "--roles-size", "0"},
	} {
		c := start(t, nil, args...)
		code := c.wait(t, 30*time.Second)
		if args[len(args)-1] == "0" { // size 0 means the family's default
			assert.Equal(t, 0, code, "%v: %s", args, c.stderr.String())
			continue
		}
		assert.Equal(t, 2, code, "%v: %s", args, c.stderr.String())
	}
}

// TestBinaryRoleModelsNameTheFlag: the simulated model beside a real one,
// or a spec that is not one, is refused by every command that gives roles
// models (problems.RoleModels), each naming its own flag; exit 2.
func TestBinaryRoleModelsNameTheFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"multiply", "--digits", "3", "--model", "openai:x", "--model-solve", "sim"}, `--model-solve "sim": the simulated model plays every role or none; give the solve role a real model too`},
		{[]string{"sort", "--length", "5", "--model-compose", "openai:x"}, `--model "sim" plus --model-compose "openai:x": the simulated model plays every role or none`},
		{[]string{"multiply", "--digits", "3", "--model", "openai:x", "--model-atomic", "nosuch:model"}, `--model-atomic "nosuch:model"`},
		{[]string{"calibrate", "--roles", "sort", "--model", "openai:x", "--model", "sim"}, `--model "sim": the simulated model plays every role or none`},
		{[]string{"solve", "tasks.jsonl", "--model", "openai:x", "--model-decompose", "sim"}, `--model-decompose "sim": the simulated model plays every role or none`},
	} {
		p := start(t, nil, c.args...)
		assert.Equal(t, 2, p.wait(t, 30*time.Second), "%v: %s", c.args, p.stderr.String())
		assert.Contains(t, p.stderr.String(), c.says, "%v", c.args)
		assert.Empty(t, p.stdout.String(), "%v", c.args)
	}
}
