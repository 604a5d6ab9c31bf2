package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/families/sortlist"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sort2 is a new family as a user adds one: sort under another name.
type sort2 struct{ sortlist.Family }

func (sort2) Name() string { return "sort2" }

// TestARegisteredFamilyIsACommand: a family registered with
// problems.Register is a command of its own (its input flags, its size
// flag, the decomposition flags, help from its registration when it has
// no help file), a `maker solve` line and a calibrate --roles family.
func TestARegisteredFamilyIsACommand(t *testing.T) {
	t.Cleanup(problems.Register(problems.Builtin{Family: sort2{}, Input: sortlist.Input{}, Short: "Sort again", Example: `{"list": [INTEGERS]}`,
		Long: "sort2 sorts a list again.", Examples: "  maker sort2 --list '[2, 1]'",
		Flags:    []problems.InputFlag{{Name: "list", Usage: "the list", JSON: "a JSON list"}},
		Size:     problems.Size{Flag: "n", Usage: "a seeded list of N", Default: 4, Roles: 5, Max: 100, Unit: "numbers", Meaning: "the length", Noun: "a list of", Generate: sortlist.Generate},
		Headline: func(in json.RawMessage) string { return "sort2 " + string(in) }}))

	code, out, errOut := cli(t, "sort2", "--list", "[3, 1, 2]")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `sort2 {"list":[3,1,2]} (model sim): answer [1,2,3], correct`)
	code, out, errOut = cli(t, "sort2", "--n", "6", "--seed", "2", "--json")
	require.Equal(t, 0, code, errOut)
	var sum struct{ Solved bool }
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	assert.True(t, sum.Solved)
	code, _, errOut = cli(t, "sort2", "--list", "[1,")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--list "[1," is not JSON: give a JSON list`)
	code, _, errOut = cli(t, "sort2", "--n", "101")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--n: invalid problem input: a list of 101: use 0 to 100 numbers")
	code, out, _ = cli(t, "sort2", "--help")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "sort2 sorts a list again.")
	assert.Contains(t, out, "--p-solve")
	_, out, _ = cli(t, "calibrate", "--help")
	assert.Contains(t, out, "FAMILY multiply or sort or sort2")
	assert.Contains(t, out, "the length (sort2) (0: 6 digits, 20 numbers, 5 numbers)")

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "sort2": {"list": [5, 4]}}`+"\n"), 0o600))
	code, _, errOut = cli(t, "solve", tasks, "--out", filepath.Join(dir, "out.jsonl"), "--progress", "off")
	require.Equal(t, 0, code, errOut)
	res, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(res), `"answer":[4,5],"correct":true`)
}
