package problems_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/sortlist"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A problem spec runs on the simulated model of every role (its Family's
// truth) through its own prompts and schemas, unstructured: discriminator
// agents pick the proposals, the answer is checked exactly.
func TestSpecSolvesOnTheSim(t *testing.T) {
	s, err := problems.LoadSpec(filepath.Join("testdata", "sort-spec.json"))
	require.NoError(t, err)
	in := sortlist.Generate(3, 16)
	o := problems.Options{Sim: decompose.SimConfig{Seed: 3, Roles: problems.SimRoles(decompose.SimRole{P: 0.9, Rivals: 3})}}
	o.Settings.Seed = 3
	res, err := problems.SolveSpec(context.Background(), s, in, o)
	require.NoError(t, err)
	require.NotNil(t, res.Correct)
	assert.True(t, *res.Correct)
	assert.Equal(t, "sort-spec", res.Family)
	right, err := sortlist.Family{}.Solve(in)
	require.NoError(t, err)
	assert.JSONEq(t, string(right), string(res.Answer))
	require.NotNil(t, res.Roles[decompose.RoleDiscriminate], "unstructured: discriminators pick")
	assert.Positive(t, res.Roles[decompose.RoleDiscriminate].Decisions)
	assert.Equal(t, res.Samples, sumSamples(res))

	// A journal of the spec is refused for another spec of the same name
	// and prompts (its text is in the journal's fingerprint).
	path := filepath.Join(t.TempDir(), "j")
	o.Journal, o.JournalUnsigned = path, true
	_, err = problems.SolveSpec(context.Background(), s, in, o)
	require.NoError(t, err)
	other, err := problems.ParseSpec(mustEdit(t, s, func(m map[string]any) { m["atomic_bytes"] = 3 }))
	require.NoError(t, err)
	_, err = problems.SolveSpec(context.Background(), other, in, o)
	assert.ErrorIs(t, err, decompose.ErrJournalMismatch)
}

func sumSamples(res *decompose.Result) int {
	n := 0
	for _, st := range res.Roles {
		n += st.Samples
	}
	return n
}

// mustEdit is the spec's file with edit applied.
func mustEdit(t *testing.T, s *problems.Spec, edit func(map[string]any)) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	edit(m)
	b, err = json.Marshal(m)
	require.NoError(t, err)
	return b
}

func TestSpecRefusals(t *testing.T) {
	s, err := problems.LoadSpec(filepath.Join("testdata", "sum-spec.json"))
	require.NoError(t, err)
	for name, edit := range map[string]func(map[string]any){
		"no name":          func(m map[string]any) { delete(m, "name") },
		"no solve prompt":  func(m map[string]any) { delete(m["prompts"].(map[string]any), "solve") },
		"no discriminate":  func(m map[string]any) { delete(m["prompts"].(map[string]any), "discriminate") },
		"bad schema":       func(m map[string]any) { m["answer"] = map[string]any{"type": 7} },
		"no input schema":  func(m map[string]any) { delete(m, "input") },
		"unknown family":   func(m map[string]any) { m["family"] = "hanoi" },
		"unknown field":    func(m map[string]any) { m["sytem"] = "x" },
		"breadth out of 2": func(m map[string]any) { m["max_breadth"] = 1 },
	} {
		_, err := problems.ParseSpec(mustEdit(t, s, edit))
		assert.ErrorIs(t, err, problems.ErrSpec, name)
	}
	// The simulated model cannot play a spec without a family's truth.
	_, err = problems.SolveSpec(context.Background(), s, json.RawMessage(`{"n": [1, 2, 3]}`), problems.Options{})
	assert.ErrorIs(t, err, problems.ErrNoTruth)
	// An input that breaks the input schema is refused before anything runs.
	fam := s.AsFamily()
	_, err = decompose.Solve(context.Background(), fam, json.RawMessage(`{"n": []}`), decompose.Config{})
	assert.ErrorIs(t, err, decompose.ErrInput)
	// A reply whose answer breaks the answer schema is a red flag.
	_, err = decompose.DecodeAnswer(fam, json.RawMessage(`{"n":[1,2]}`), maker.Reply{Text: `{"answer": "three"}`})
	assert.ErrorIs(t, err, maker.ErrFormat)
	a, err := decompose.DecodeAnswer(fam, json.RawMessage(`{"n":[1,2]}`), maker.Reply{Text: `{"answer": 3}`})
	require.NoError(t, err)
	assert.JSONEq(t, `3`, string(a))
	// Without a checker or family the answer is not checked.
	_, checks := fam.(decompose.Checker)
	assert.False(t, checks)
}

// The spec's checker decides "correct": a JSON Schema over the input and
// the answer.
func TestSpecChecker(t *testing.T) {
	s, err := problems.LoadSpec(filepath.Join("testdata", "sum-spec.json"))
	require.NoError(t, err)
	checked, err := problems.ParseSpec(mustEdit(t, s, func(m map[string]any) {
		m["checker"] = map[string]any{"properties": map[string]any{"answer": map[string]any{"minimum": 10}}}
	}))
	require.NoError(t, err)
	c, ok := checked.AsFamily().(decompose.Checker)
	require.True(t, ok)
	good, err := c.Check(json.RawMessage(`{"n":[4,6]}`), json.RawMessage(`10`))
	require.NoError(t, err)
	assert.True(t, good)
	good, err = c.Check(json.RawMessage(`{"n":[4,6]}`), json.RawMessage(`9`))
	require.NoError(t, err)
	assert.False(t, good)
}
