package intent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"

	"github.com/mdap-go/mdap/intent"
)

const responsesDir = "../testdata/responses"

const (
	hanoiCanon    = `{"move":[1,0,2],"next_state":[[2,3],[],[1]]}`
	readFileCanon = `{"tool_intent":{"args":{"max_bytes":4096,"path":"notes/todo.txt"},"tool":"read_file"}}`
)

// fixtures is the expected result of every file in testdata/responses:
// either a canonical form or an error sentinel.
var fixtures = map[string]struct {
	canon string
	err   error
}{
	"good.txt":              {canon: hanoiCanon},
	"fenced.txt":            {canon: hanoiCanon},
	"fenced_upper.txt":      {canon: hanoiCanon},
	"fenced_bare.txt":       {canon: hanoiCanon},
	"inline.txt":            {canon: hanoiCanon},
	"repeated.txt":          {canon: hanoiCanon},
	"python_fence.txt":      {canon: hanoiCanon},
	"overlong.txt":          {canon: hanoiCanon},
	"big_numbers.txt":       {canon: `{"huge":1e+30,"id":12345678901234567890,"ratio":1.5,"tiny":5e-8,"zero":0}`},
	"intent_fenced.txt":     {canon: readFileCanon},
	"intent_bare.txt":       {canon: readFileCanon},
	"intent_inline.txt":     {canon: readFileCanon},
	"native.json":           {canon: readFileCanon},
	"native_noargs.json":    {canon: `{"tool_intent":{"args":{},"tool":"list_dir"}}`},
	"intent_with_value.txt": {canon: `{"status":"need_input","tool_intent":{"args":{"path":"."},"tool":"list_dir"}}`},
	"ambiguous.txt":         {err: intent.ErrAmbiguous},
	"native_multi.json":     {err: intent.ErrAmbiguous},
	"malformed.txt":         {err: intent.ErrMalformed},
	"truncated.txt":         {err: intent.ErrMalformed},
	"empty.txt":             {err: intent.ErrNoAnswer},
	"prose.txt":             {err: intent.ErrNoAnswer},
	"native_empty.json":     {err: intent.ErrNoAnswer},
	"invalid_intent.txt":    {err: intent.ErrInvalidIntent},
	"args_not_object.txt":   {err: intent.ErrInvalidIntent},
	"native_bad_args.json":  {err: intent.ErrInvalidIntent},
}

// wireCall is an llms.ToolCall in the shape of its struct tags (the OpenAI
// wire shape). langchaingo v0.1.14's own ToolCall.UnmarshalJSON cannot be
// used: it reads a {"type":"tool_call","tool_call":{...}} envelope and, even
// on its own MarshalJSON output, silently leaves FunctionCall empty
// (TestLangchaingoToolCallJSONLosesFunction pins this).
type wireCall struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function *llms.FunctionCall `json:"function"`
}

// readToolCalls decodes a native*.json fixture.
func readToolCalls(t testing.TB, b []byte) []llms.ToolCall {
	t.Helper()
	var wire []wireCall
	require.NoError(t, json.Unmarshal(b, &wire))
	calls := make([]llms.ToolCall, len(wire))
	for i, w := range wire {
		calls[i] = llms.ToolCall{ID: w.ID, Type: w.Type, FunctionCall: w.Function}
	}
	return calls
}

// parseFixture reads one fixture the way its name says: native*.json as
// native tool calls, anything else as a text reply.
func parseFixture(t *testing.T, name string) (intent.Output, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(responsesDir, name))
	require.NoError(t, err)
	if strings.HasPrefix(name, "native") && strings.HasSuffix(name, ".json") {
		return intent.FromToolCalls(readToolCalls(t, b))
	}
	return intent.Parse(string(b))
}

func TestFixtures(t *testing.T) {
	entries, err := os.ReadDir(responsesDir)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" {
			continue
		}
		seen[e.Name()] = true
		want, ok := fixtures[e.Name()]
		if !assert.True(t, ok, "fixture %s has no expectation in the table", e.Name()) {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			o, err := parseFixture(t, e.Name())
			if want.err != nil {
				require.ErrorIs(t, err, want.err)
				assert.Equal(t, intent.Output{}, o)
				return
			}
			require.NoError(t, err)
			c, err := intent.Canonical(o)
			require.NoError(t, err)
			assert.Equal(t, want.canon, string(c))
		})
	}
	for name := range fixtures {
		assert.True(t, seen[name], "fixture %s is in the table but not on disk", name)
	}
}

// TestFixturesVoteTogether: every file with the same expected canonical form
// has the same key, and files with different forms have different keys.
func TestFixturesVoteTogether(t *testing.T) {
	keyOf := map[string]uint64{} // canonical form -> key
	for name, want := range fixtures {
		if want.err != nil {
			continue
		}
		o, err := parseFixture(t, name)
		require.NoError(t, err, name)
		k, err := intent.Key(o)
		require.NoError(t, err, name)
		if prev, ok := keyOf[want.canon]; ok {
			assert.Equal(t, prev, k, "%s votes apart from its group", name)
		}
		keyOf[want.canon] = k
	}
	distinct := map[uint64]bool{}
	for _, k := range keyOf {
		distinct[k] = true
	}
	assert.Len(t, distinct, len(keyOf), "two different canonical forms share a key")
}

// TestFixtureDetails checks what the canonical form does not show.
func TestFixtureDetails(t *testing.T) {
	o, err := parseFixture(t, "intent_fenced.txt")
	require.NoError(t, err)
	require.NotNil(t, o.Intent)
	assert.Equal(t, "the plan depends on the open items", o.Intent.Rationale)
	assert.Nil(t, o.Value)

	o, err = parseFixture(t, "native_noargs.json")
	require.NoError(t, err)
	require.NotNil(t, o.Intent)
	assert.NotNil(t, o.Intent.Args)
	assert.Empty(t, o.Intent.Args)

	o, err = parseFixture(t, "big_numbers.txt")
	require.NoError(t, err)
	assert.Equal(t, json.Number("12345678901234567890"), o.Value.(map[string]any)["id"])

	_, err = parseFixture(t, "ambiguous.txt")
	assert.ErrorContains(t, err, `{"move":[1,0,1]`)
}
