package spec_test

import (
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/maker/spec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithInputMergesIntoTheInitialState: an input's fields replace or
// join the initial state's; the task starts there; two inputs give two
// fingerprints and the same input the same one; the spec itself is
// unchanged.
func TestWithInputMergesIntoTheInitialState(t *testing.T) {
	s, err := spec.Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	before := string(s.InitialState)
	a, err := s.WithInput(json.RawMessage(`{"file": "src/version.go", "extra": [1, 2]}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"version": null, "file": "src/version.go", "extra": [1, 2]}`, string(spec.New(a).State()))
	assert.Equal(t, before, string(s.InitialState), "the spec is unchanged")
	b, err := s.WithInput(json.RawMessage(`{"file": "other.go"}`))
	require.NoError(t, err)
	a2, err := s.WithInput(json.RawMessage(`{"extra": [1, 2], "file": "src/version.go"}`))
	require.NoError(t, err)
	fp := func(x *spec.Spec) string { return spec.New(x).Fingerprint() }
	assert.NotEqual(t, fp(a), fp(b), "another input, another task")
	assert.NotEqual(t, fp(s), fp(a))
	assert.Equal(t, fp(a), fp(a2), "the same input in another field order is the same task")
}

// TestWithInputRefusesWhatIsNotAnObject: an input that is not a JSON
// object, or a spec whose initial state is not one, is refused with
// ErrSpec and a message saying what an input is.
func TestWithInputRefusesWhatIsNotAnObject(t *testing.T) {
	s, err := spec.Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	for _, in := range []string{`[1]`, `"x"`, `null`, `3`, ``, `{`} {
		_, err := s.WithInput(json.RawMessage(in))
		require.ErrorIs(t, err, spec.ErrSpec, "%q", in)
		assert.Contains(t, err.Error(), `"input" must be a JSON object`, "%q", in)
	}
	list, err := spec.Parse([]byte(`{"system": "count", "answer": {"type": "object"}, "initial_state": [1, 2]}`))
	require.NoError(t, err)
	_, err = list.WithInput(json.RawMessage(`{"a": 1}`))
	require.ErrorIs(t, err, spec.ErrSpec)
	assert.Contains(t, err.Error(), "not a JSON object")
	empty, err := spec.Parse([]byte(`{"system": "count", "answer": {"type": "object"}}`))
	require.NoError(t, err)
	e, err := empty.WithInput(json.RawMessage(`{"a": 1}`))
	require.NoError(t, err, "a spec without an initial state takes the input as its state")
	assert.JSONEq(t, `{"a": 1}`, string(spec.New(e).State()))
}
