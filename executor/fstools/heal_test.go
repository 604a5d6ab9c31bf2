//go:build unix

package fstools

import (
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealingThroughExecute(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)

	// A double-encoded array heals.
	obs := run(t, e, "grep", args{"pattern": "needle|world", "paths": `["sub/a.txt","hello.txt"]`})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, []string{"arguments.paths"}, obs.Healed)
	assert.Equal(t, "sub/a.txt:2: needle one\nhello.txt:2: world\n", obs.Content)

	// A string that is not JSON does not.
	obs = run(t, e, "grep", args{"pattern": "x", "paths": "sub/a.txt"})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.Contains(t, obs.Content, "arguments.paths: got string, want array")
	assert.Empty(t, obs.Healed)

	// Healing does not bypass validation: the decoded array is checked too.
	obs = run(t, e, "grep", args{"pattern": "x", "paths": `[1, 2]`})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.Contains(t, obs.Content, "arguments.paths[0]: got number, want string")
	assert.Contains(t, obs.Content, "arguments.paths[1]: got number, want string")

	// A number in a string heals for an integer field; so does a boolean.
	obs = run(t, e, "read_file", args{"path": "hello.txt", "offset": "2", "limit": " 1 "})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "world\n", obs.Content)
	assert.Equal(t, []string{"arguments.limit", "arguments.offset"}, obs.Healed)
	obs = run(t, e, "grep", args{"pattern": "NEEDLE ONE", "paths": []any{"sub"}, "case_insensitive": "true"})
	assert.Equal(t, "sub/a.txt:2: needle one\n", obs.Content)

	// Not an integer, not a number, not exactly one value: no healing.
	for _, bad := range []string{"2.5", "[2]", "two", "2 3", "", "null", "true"} {
		obs = run(t, e, "read_file", args{"path": "hello.txt", "offset": bad})
		assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, "%q", bad)
		assert.Contains(t, obs.Content, "arguments.offset: got string, want integer", "%q", bad)
	}
	// A field that wants a string keeps JSON-looking text as text.
	obs = run(t, e, "grep", args{"pattern": "[1]", "paths": []any{"hello.txt"}})
	assert.True(t, obs.OK())
	assert.Empty(t, obs.Healed)
}

func TestNumbersOfEveryGoTypeValidate(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	for _, n := range []any{2, int64(2), float64(2), json.Number("2"), json.Number("2.0"), uint8(2)} {
		obs := run(t, e, "read_file", args{"path": "hello.txt", "offset": n})
		assert.Equal(t, "world\n", obs.Content, "%T", n)
	}
	obs := run(t, e, "read_file", args{"path": "hello.txt", "offset": json.Number("1.5")})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	obs = run(t, e, "read_file", args{"path": "hello.txt", "offset": make(chan int)})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.Contains(t, obs.Content, "not JSON-encodable")
}
