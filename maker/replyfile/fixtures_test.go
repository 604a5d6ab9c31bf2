package replyfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/inspect"
	"github.com/mdap-go/mdap/maker/replyfile"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readFixture(t *testing.T, name string) maker.Reply {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../testdata/responses", name))
	require.NoError(t, err)
	r, err := replyfile.Read(name, b)
	require.NoError(t, err)
	return r
}

func TestReadReplyFixturesVoteAsTheSolverWould(t *testing.T) {
	t.Parallel()
	native := readFixture(t, "native.json")
	require.Len(t, native.ToolCalls, 1, "a .json file of native calls is read as tool calls")
	assert.Equal(t, "read_file", native.ToolCalls[0].FunctionCall.Name)
	assert.Empty(t, native.Text)
	v := inspect.Reply(native, 0, maker.FlagRules{}, nil)
	require.Empty(t, v.Flag, v.Reason)
	for _, same := range []string{"intent_fenced.txt", "intent_bare.txt", "intent_inline.txt"} {
		w := inspect.Reply(readFixture(t, same), 0, maker.FlagRules{}, nil)
		assert.Equal(t, v.Key, w.Key, "%s votes with native.json", same)
	}
	assert.Equal(t, "overlong", inspect.Reply(readFixture(t, "overlong.txt"), 0, maker.FlagRules{}, nil).Flag, "40 KB is over 750 estimated tokens")
	assert.Empty(t, inspect.Reply(readFixture(t, "overlong.txt"), 1<<20, maker.FlagRules{}, nil).Flag, "under a larger cap it votes")
	assert.Equal(t, "empty", inspect.Reply(readFixture(t, "empty.txt"), 0, maker.FlagRules{}, nil).Flag)
	assert.Equal(t, "empty", inspect.Reply(readFixture(t, "native_empty.json"), 0, maker.FlagRules{}, nil).Flag)
	assert.Equal(t, "unparseable", inspect.Reply(readFixture(t, "native_multi.json"), 0, maker.FlagRules{}, nil).Flag)
	assert.Equal(t, "unparseable", inspect.Reply(readFixture(t, "native_bad_args.json"), 0, maker.FlagRules{}, nil).Flag)
	noargs := readFixture(t, "native_noargs.json")
	require.Len(t, noargs.ToolCalls, 1)
	assert.Empty(t, inspect.Reply(noargs, 0, maker.FlagRules{}, nil).Flag)
}

func TestReadReplyShapes(t *testing.T) {
	t.Parallel()
	call := `{"tool_intent":{"tool":"grep","args":{"pattern":"x"}}}`
	want := inspect.Reply(maker.Reply{Text: call}, 0, maker.FlagRules{}, nil)
	require.Empty(t, want.Flag)
	for name, body := range map[string]string{
		"one call":         `{"id":"c1","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"x\"}"}}`,
		"object arguments": `[{"id":"c1","type":"function","function":{"name":"grep","arguments":{"pattern":"x"}}}]`,
		"chat completion":  `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"grep","arguments":"{\"pattern\": \"x\"}"}}]}}],"usage":{"prompt_tokens":50,"completion_tokens":12}}`,
		"anthropic":        `{"content":[{"type":"text","text":"Let me search."},{"type":"tool_use","id":"toolu_1","name":"grep","input":{"pattern":"x"}}],"stop_reason":"tool_use","usage":{"input_tokens":50,"output_tokens":12}}`,
	} {
		r, err := replyfile.Read("reply.json", []byte(body))
		require.NoError(t, err, name)
		got := inspect.Reply(r, 0, maker.FlagRules{}, nil)
		assert.Empty(t, got.Flag, "%s: %s", name, got.Reason)
		assert.Equal(t, want.Key, got.Key, name)
	}

	r, err := replyfile.Read("resp.json", []byte(`{"choices":[{"finish_reason":"length","message":{"content":"{\"a\": 1"}}],"usage":{"prompt_tokens":5,"completion_tokens":750}}`))
	require.NoError(t, err)
	assert.Equal(t, 750, r.OutputTokens)
	assert.False(t, r.Estimated, "the response's own usage is used")
	assert.Equal(t, "cut off", inspect.Reply(r, 0, maker.FlagRules{}, nil).Flag)

	_, err = replyfile.Read("resp.json", []byte(`{"choices":[]}`))
	assert.ErrorIs(t, err, maker.ErrNoChoice)

	// JSON that is none of the shapes is a text reply, as is any .txt.
	for name, body := range map[string]string{"answer.json": `{"move": [1, 0, 2]}`, "list.json": `[1, 2]`, "call.txt": `{"id":"c1","type":"function","function":{"name":"grep","arguments":"{}"}}`} {
		r, err := replyfile.Read(name, []byte(body))
		require.NoError(t, err)
		assert.Equal(t, body, r.Text, name)
		assert.Empty(t, r.ToolCalls, name)
		assert.True(t, r.Estimated)
	}
}

func FuzzReadReply(f *testing.F) {
	entries, _ := os.ReadDir("../../testdata/responses")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("../../testdata/responses", e.Name())); err == nil && len(b) < 4096 {
			f.Add(e.Name(), b)
		}
	}
	f.Add("r.json", []byte(`{"choices":[{"message":{"content":"{\"a\":1}","tool_calls":[{"function":{"name":"x","arguments":null}}]}}]}`))
	f.Add("r.json", []byte(`{"content":[{"type":"tool_use","name":"grep","input":{}}]}`))
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		if len(b) > 16<<10 || len(name) > 64 {
			return
		}
		r, err := replyfile.Read(name, b)
		if err != nil {
			require.ErrorIs(t, err, maker.ErrNoChoice)
			return
		}
		require.GreaterOrEqual(t, r.OutputTokens, 0)
		v := inspect.Reply(r, 0, maker.FlagRules{}, nil)
		if v.Flag == "" {
			require.NotEmpty(t, v.Key)
			require.NotEmpty(t, v.Canonical)
		} else {
			require.Empty(t, v.Key)
		}
	})
}

func ExampleRead() {
	native, _ := replyfile.Read("call.json", []byte(`[{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\": \"Version\"}"}}]`))
	text, _ := replyfile.Read("reply.txt", []byte("I will search.\n```json\n{\"tool_intent\": {\"tool\": \"grep\", \"args\": {\"pattern\": \"Version\"}}}\n```"))
	a, b := inspect.Reply(native, 0, maker.FlagRules{}, nil), inspect.Reply(text, 0, maker.FlagRules{}, nil)
	fmt.Println(a.Canonical)
	fmt.Println("vote together:", a.Key == b.Key)
	// Output:
	// {"tool_intent":{"args":{"pattern":"Version"},"tool":"grep"}}
	// vote together: true
}
