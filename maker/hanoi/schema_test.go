package hanoi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func compile(t *testing.T, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("mem:///answer.json", doc))
	s, err := c.Compile("mem:///answer.json")
	require.NoError(t, err)
	return s
}

func TestAnswerSchemaAdmitsOnlyWellFormedAnswers(t *testing.T) {
	for _, n := range []int{1, 2, 3, 6, 7} {
		task, err := hanoi.New(n)
		require.NoError(t, err)
		var st maker.StructuredTask = task
		raw := st.AnswerSchema()
		schema := compile(t, raw)
		var doc struct {
			Properties struct {
				Move struct {
					Enum []json.RawMessage `json:"enum"`
				} `json:"move"`
				NextState struct {
					Enum []json.RawMessage `json:"enum"`
				} `json:"next_state"`
			} `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(raw, &doc))

		// The right answer of the first step fits the schema.
		a, err := hanoi.CorrectAnswer(hanoi.Start(n), nil)
		require.NoError(t, err)
		var v any
		require.NoError(t, json.Unmarshal([]byte(a.JSON()), &v))
		assert.NoError(t, schema.Validate(v), "n=%d", n)

		assert.Len(t, doc.Properties.Move.Enum, 6*n, "n=%d: each disk between two different pegs", n)
		if n > 6 {
			assert.Empty(t, doc.Properties.NextState.Enum, "n=%d: 3^n states is too many to list", n)
			continue
		}
		// Every state the schema lists is well formed: with any listed
		// move, the reply parses.
		states := doc.Properties.NextState.Enum
		want := 1
		for range n {
			want *= 3
		}
		assert.Len(t, states, want, "n=%d: every well-formed state", n)
		seen := map[string]bool{}
		for _, s := range states {
			seen[string(s)] = true
			reply := fmt.Sprintf(`{"move": [1, 0, 1], "next_state": %s}`, s)
			_, err := hanoi.ParseReply(reply, n)
			assert.NoError(t, err, "n=%d: %s", n, reply)
		}
		assert.Len(t, seen, want, "n=%d: no state twice", n)
		// A reply the schema refuses: disk 0, a disk twice.
		for _, bad := range []string{
			`{"move": [0, 0, 1], "next_state": []}`,
			fmt.Sprintf(`{"move": [1, 1, 1], "next_state": %s}`, states[0]),
			`{"move": [1, 0, 1], "next_state": [[1, 1], [], []]}`,
		} {
			require.NoError(t, json.Unmarshal([]byte(bad), &v))
			assert.Error(t, schema.Validate(v), "n=%d: %s", n, bad)
		}
	}
}
