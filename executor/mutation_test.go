package executor

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/intent"
)

// TestToolNameOfExactlyTheMaximumIsLookedUp: a tool name of
// MaxToolNameBytes is looked up and named whole in the denial; only a
// longer one is refused for its length (executor.go:225).
func TestToolNameOfExactlyTheMaximumIsLookedUp(t *testing.T) {
	ex, err := New()
	require.NoError(t, err)
	defer ex.Close()
	name := strings.Repeat("x", MaxToolNameBytes)
	obs, ok := ex.Check(intent.ToolIntent{Tool: name})
	require.False(t, ok)
	assert.Equal(t, name, obs.Tool)
	assert.Contains(t, obs.Content, fmt.Sprintf("there is no tool named %q.", name))
	assert.NotContains(t, obs.Content, "tool names are at most")

	obs, ok = ex.Check(intent.ToolIntent{Tool: name + "x"})
	require.False(t, ok)
	assert.Contains(t, obs.Content, fmt.Sprintf("a name of %d bytes; tool names are at most %d bytes", MaxToolNameBytes+1, MaxToolNameBytes))
}

// TestUnknownToolMentionsWithheldToolsOnlyIfAny: the denial of an unknown
// tool says other tools are withheld only when the policy withholds some
// (executor.go:271: every registered tool loaded, none withheld).
func TestUnknownToolMentionsWithheldToolsOnlyIfAny(t *testing.T) {
	ex, err := New()
	require.NoError(t, err)
	defer ex.Close()
	require.Len(t, ex.Loaded(), len(ex.Registered())+1, "every registered tool is loaded, besides the index")
	obs, ok := ex.Check(intent.ToolIntent{Tool: "nope"})
	require.False(t, ok)
	assert.Contains(t, obs.Content, "Tools you can call: ")
	assert.NotContains(t, obs.Content, "withheld")
}

// TestCallFinishedDespiteCancelIsOK: a call whose context is cancelled
// while it runs, but which returns its output without an error, is a
// finished call, not a cancelled one (executor.go:314: cancelled only
// with an error or a panic).
func TestCallFinishedDespiteCancelIsOK(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tool := NewTool("finish", categories.Search, "finishes", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) {
		cancel()
		return "done", nil
	})
	e := newExec(t, WithTools(tool))
	obs, err := e.Execute(ctx, intent.ToolIntent{Tool: "finish", Args: map[string]any{}})
	require.NoError(t, err)
	assert.Equal(t, intent.StatusOK, obs.Status, "%+v", obs)
	assert.Equal(t, "done", obs.Content)
}

// TestTimedOutToolErrorIsATimeout: a goroutine tool that stops at its
// timeout with an error of its own (one that does not wrap
// context.DeadlineExceeded) is a timeout, its error wrapping ErrTimeout
// (executor.go:377, the three parts of the wrapping's condition: an error,
// no panic, the caller's context still alive).
func TestTimedOutToolErrorIsATimeout(t *testing.T) {
	stubborn := NewTool("stubborn", categories.Web, "", json.RawMessage(`{"type":"object"}`), func(ctx context.Context, _ map[string]any) (string, error) {
		<-ctx.Done()
		return "", errors.New("gave up waiting for the server")
	})
	e := newExec(t, WithTools(stubborn), WithTimeout(20*time.Millisecond),
		WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	obs := run(t, e, "stubborn", nil)
	assert.Equal(t, intent.StatusError, obs.Status)
	assert.Equal(t, intent.ReasonTimeout, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, "did not finish within 20ms")
}

// TestOutputCutWithNoRuneStart: a tool's output that is over the cap and
// has no UTF-8 rune start before the cut (continuation bytes only) is cut
// to nothing plus the note, without reading before the string's start
// (executor.go:429, capText's backward search stopping at 0; the mutant
// indexes s[-1] and panics).
func TestOutputCutWithNoRuneStart(t *testing.T) {
	const outCap = 100
	junk := NewTool("junk", categories.Web, "", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) {
		return strings.Repeat("\x80", outCap+10), nil
	})
	e := newExec(t, WithTools(junk), WithOutputCap(outCap),
		WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	obs := run(t, e, "junk", nil)
	assert.True(t, obs.Truncated)
	assert.Equal(t, "\n[output truncated: showing the first 0 of 110 bytes]", obs.Content)
}

// TestHealedArgumentsOfTheCapAreMeasuredAgain: healing can lengthen the
// arguments ("1e20" for an integer becomes 100000000000000000000, 15
// bytes more), so healed arguments are measured again against
// DefaultArgsCap: exactly the cap passes, one byte over is refused though
// the call as sent was under it (validate.go:92 and :93: the second
// measure taken when values were healed, its error test and its boundary).
func TestHealedArgumentsOfTheCapAreMeasuredAgain(t *testing.T) {
	tool := NewTool("sized", categories.Web, "", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"pad":{"type":"string"}}}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	// padded returns arguments whose healed form is exactly size bytes.
	padded := func(size int) args {
		healed, err := json.Marshal(args{"n": json.Number("100000000000000000000"), "pad": ""})
		require.NoError(t, err)
		return args{"n": "1e20", "pad": strings.Repeat("x", size-len(healed))}
	}
	for _, c := range []struct {
		size int
		ok   bool
	}{{DefaultArgsCap, true}, {DefaultArgsCap + 1, false}} {
		a := padded(c.size)
		sent, err := json.Marshal(a)
		require.NoError(t, err)
		require.LessOrEqual(t, len(sent), DefaultArgsCap, "the call as sent is under the cap")
		obs := run(t, e, "sized", a)
		if c.ok {
			assert.Equal(t, "ran", obs.Content, "healed to %d bytes", c.size)
			assert.Equal(t, []string{"arguments.n"}, obs.Healed)
		} else {
			assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, "healed to %d bytes", c.size)
			assert.Contains(t, obs.Content, fmt.Sprintf("arguments: %d bytes as JSON; a call takes at most %d", c.size, DefaultArgsCap))
		}
	}
}

// TestArgumentsOfExactlyMaxArgValues: a call of exactly MaxArgValues
// values (the arguments object counted) runs; one more value is refused
// (validate.go:100, the count's boundary).
func TestArgumentsOfExactlyMaxArgValues(t *testing.T) {
	tool := NewTool("many", categories.Web, "", json.RawMessage(`{"type":"object"}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	list := func(n int) []any {
		l := make([]any, n)
		for i := range l {
			l[i] = i
		}
		return l
	}
	// The object, the array and its items.
	assert.Equal(t, "ran", run(t, e, "many", args{"a": list(MaxArgValues - 2)}).Content)
	obs := run(t, e, "many", args{"a": list(MaxArgValues - 1)})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("more than %d values", MaxArgValues))
}

// TestInvalidArgumentsDenialOrderAndSummary: an invalid-arguments denial
// lists the arguments object's own problem before its properties', array
// indexes in numeric order ([2] before [10], also when the library gives
// them the other way round), at one location the
// library's keyword order (both minLength problems, by message, before
// the pattern's, though the schema puts the pattern between them), and
// the summary names a property with no type and not required by its name
// alone (validate.go:204, :224, :225, :229, the order's comparisons;
// :319 and :327, the summary's empty attribute lists).
func TestInvalidArgumentsDenialOrderAndSummary(t *testing.T) {
	tool := NewTool("v", categories.Web, "", json.RawMessage(`{"type":"object","required":["need"],"properties":{
	  "s":{"type":"string","allOf":[{"minLength":5},{"pattern":"^x"},{"minLength":6}]},
	  "a":{"type":"array","items":{"type":"integer"}},
	  "b":{"type":"array","allOf":[{"items":{"type":"integer"}},{"items":{"maximum":5}}]},
	  "any":{}, "need":{"type":"string"}}}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	l := make([]any, 11)
	for i := range l {
		l[i] = 1
	}
	l[2], l[10] = "two", "ten"
	// b's problems come from the library as [10] (its first allOf), then [2].
	m := slices.Clone(l)
	m[2] = 9
	obs := run(t, e, "v", args{"s": "abc", "a": l, "b": m})
	assert.Equal(t, `invalid arguments for v (8 problems); nothing ran:
- arguments: missing property 'need'
- arguments.a[2]: got string, want integer
- arguments.a[10]: got string, want integer
- arguments.b[2]: maximum: got 9, want 5
- arguments.b[10]: got string, want integer
- arguments.s: minLength: got 3, want 5
- arguments.s: minLength: got 3, want 6
- arguments.s: 'abc' does not match pattern '^x'
v takes need (string, required), a (array), any, b (array), s (string).`, obs.Content)
}

// TestCutTextOnARuneBoundary: cutText keeps a text of exactly n bytes,
// cuts a longer one back to the rune start at or before n, never past n
// nor inside a rune, and cuts text with no rune start before n to nothing
// (validate.go:275, :279, :280).
func TestCutTextOnARuneBoundary(t *testing.T) {
	assert.Equal(t, "abcd", cutText("abcd", 4))
	assert.Equal(t, "abc…", cutText("abcde", 3))
	assert.Equal(t, "a…", cutText("aéb", 2), "é is bytes 1 and 2: cut before it")
	assert.Equal(t, "aé…", cutText("aébc", 3))
	assert.Equal(t, "…", cutText("\x80\x80\x80", 2))
}

// TestArgumentsOfExactlyTheCap: a call whose arguments are exactly
// DefaultArgsCap bytes as JSON runs; one byte more is refused
// (heal.go:148, normalise's boundary).
func TestArgumentsOfExactlyTheCap(t *testing.T) {
	tool := NewTool("sized", categories.Web, "", json.RawMessage(`{"type":"object"}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	empty := len(`{"pad":""}`)
	assert.Equal(t, "ran", run(t, e, "sized", args{"pad": strings.Repeat("x", DefaultArgsCap-empty)}).Content)
	obs := run(t, e, "sized", args{"pad": strings.Repeat("x", DefaultArgsCap-empty+1)})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("arguments: %d bytes as JSON; a call takes at most %d", DefaultArgsCap+1, DefaultArgsCap))
}

// TestRewrittenNumbersAreMeasuredAgain: a number written 1e20 is
// rewritten 100000000000000000000 (17 bytes more), so arguments with a
// rewritten number are measured again: over the cap after the rewrite is
// refused though the call as sent was under it (heal.go:158 and :184, the
// count of rewritten numbers that marks the copy changed).
func TestRewrittenNumbersAreMeasuredAgain(t *testing.T) {
	tool := NewTool("sized", categories.Web, "", json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"},"pad":{"type":"string"}}}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	rewritten := len(`{"n":100000000000000000000,"pad":""}`)
	a := args{"n": json.Number("1e20"), "pad": strings.Repeat("x", DefaultArgsCap+1-rewritten)}
	sent, err := json.Marshal(a)
	require.NoError(t, err)
	require.LessOrEqual(t, len(sent), DefaultArgsCap, "the call as sent is under the cap")
	obs := run(t, e, "sized", a)
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("arguments: %d bytes as JSON; a call takes at most %d", DefaultArgsCap+1, DefaultArgsCap))
}

// TestNormalizeToolNameOfExactlyTheMaximum: Normalize looks up a tool
// whose name is exactly MaxToolNameBytes long and heals its arguments
// (normalize.go:39, the name's boundary).
func TestNormalizeToolNameOfExactlyTheMaximum(t *testing.T) {
	name := strings.Repeat("x", MaxToolNameBytes)
	tool := NewTool(name, categories.Web, "", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	got, err := e.Normalize(intent.ToolIntent{Tool: name, Args: args{"n": "2"}})
	require.NoError(t, err)
	assert.Equal(t, args{"n": json.Number("2")}, got.Args)
}

// TestDescribeArgsEnumWords: an argument with an enum is described by
// its values, one with an empty enum by its type (describe.go:70, a
// non-empty enum).
func TestDescribeArgsEnumWords(t *testing.T) {
	got := DescribeArgs(map[string]any{"properties": map[string]any{
		"mode": map[string]any{"type": "string", "enum": []any{"fast", "slow"}},
		"none": map[string]any{"type": "string", "enum": []any{}},
	}})
	assert.Equal(t, []Arg{{Name: "mode", Type: `one of "fast", "slow"`}, {Name: "none", Type: "string"}}, got)
}

// TestDescribedTextCappedAtExactlyMaxDescribedChars: a description of
// exactly MaxDescribedChars runes is shown whole; a longer one is cut to
// MaxDescribedChars runes, ending with "..." (describe.go:106, the cap's
// bound; :107, the cut's length).
func TestDescribedTextCappedAtExactlyMaxDescribedChars(t *testing.T) {
	exact := strings.Repeat("é", MaxDescribedChars)
	for _, n := range []int{MaxDescribedChars + 1, MaxDescribedChars + 2, MaxDescribedChars + 3, 2 * MaxDescribedChars} {
		long := strings.Repeat("é", n)
		want := strings.Repeat("é", MaxDescribedChars-3) + "..."
		got := DescribeArgs(map[string]any{"properties": map[string]any{"a": map[string]any{"description": long}}})
		require.Len(t, got, 1)
		assert.Equal(t, want, got[0].Description, "%d runes", n)
		assert.Equal(t, MaxDescribedChars, utf8.RuneCountInString(got[0].Description))
		text := DescribeTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "t", Description: long}}})
		assert.Contains(t, text, "\n- t: "+want+"\n", "%d runes", n)
	}
	got := DescribeArgs(map[string]any{"properties": map[string]any{"a": map[string]any{"description": exact}}})
	assert.Equal(t, exact, got[0].Description)
	text := DescribeTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "t", Description: exact}}})
	assert.Contains(t, text, "\n- t: "+exact+"\n")
}

// TestDescribeToolsHeaderComesFirstOnce: the text starts with the one
// line that says how to call the tools, then the tools, whatever their
// number; a tool without a function does not count (describe.go:124).
func TestDescribeToolsHeaderComesFirstOnce(t *testing.T) {
	const header = "Tools you may call, by replying {\"tool_intent\": {\"tool\": NAME, \"args\": {ARGUMENT: VALUE, ...}}} (use exactly these argument names):\n"
	text := DescribeTools([]llms.Tool{
		{Type: "function"},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "one", Description: "first"}},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "two"}},
	})
	assert.Equal(t, header+"- one: first\n  no arguments: \"args\": {}\n- two\n  no arguments: \"args\": {}\n", text)
}
