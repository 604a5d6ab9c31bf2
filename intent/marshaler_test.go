package intent

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// marshaled is a typed Value of the kind a task's own answer type is: a
// json.Marshaler, here writing fixed bytes.
type marshaled []byte

func (m marshaled) MarshalJSON() ([]byte, error) { return m, nil }

// checkMarshalerIsItsMap asserts that o, with its Value replaced by a
// json.Marshaler writing that Value's JSON (compact, then indented), has
// o's Key, Canonical text and DecodeValue result.
func checkMarshalerIsItsMap(t *testing.T, o Output) {
	t.Helper()
	if o.Value == nil {
		return
	}
	compact, err := json.Marshal(o.Value)
	require.NoError(t, err)
	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, compact, "", "  "))
	wantKey, wantKeyErr := Key(o)
	wantCanon, _ := Canonical(o)
	var wantDecoded any
	wantDecodeErr := o.DecodeValue(&wantDecoded)
	for _, b := range [][]byte{compact, indented.Bytes()} {
		typed := Output{Value: marshaled(b), Intent: o.Intent}
		key, err := Key(typed)
		require.Equal(t, wantKeyErr, err, "%s", b)
		require.Equal(t, wantKey, key, "the key of %s", b)
		canon, _ := Canonical(typed)
		require.Equal(t, string(wantCanon), string(canon), "the canonical text of %s", b)
		var decoded any
		require.Equal(t, wantDecodeErr, typed.DecodeValue(&decoded), "%s", b)
		require.Equal(t, wantDecoded, decoded, "DecodeValue of %s", b)
	}
}

// FuzzMarshalerValueIsItsMap: for every Output Parse returns, a Value
// given as a json.Marshaler of its JSON text (as a task's typed answer
// is) keys, canonicalises and decodes exactly as the decoded map form
// (the promise on Output).
func FuzzMarshalerValueIsItsMap(f *testing.F) {
	for _, s := range seedFiles(f) {
		f.Add(s)
	}
	for _, s := range extraSeeds {
		f.Add(s)
	}
	f.Add(`{"move":[1,0,2],"next_state":[[3,2],[],[1]]}`)
	f.Add(`{"s":"<&>\u2028","n":[1.50,-0.0,1e400],"e":{},"l":[]}`)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > maxFuzzInput {
			return
		}
		if o, err := Parse(text); err == nil {
			checkMarshalerIsItsMap(t, o)
		}
	})
}
