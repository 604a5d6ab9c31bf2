package mcpserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// heldKeys finds the environment's keys and each spec's ;key=VAR value,
// leaves out keys under 4 bytes, and puts a key that holds another first,
// so that it is replaced whole.
func TestHeldKeys(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "abcd")
	t.Setenv("ANTHROPIC_API_KEY", "xyz")
	t.Setenv("MDAP_TEST_TEAM_KEY", "abcd-and-more")
	keys := heldKeys([]string{"sim", "openai:m;key=MDAP_TEST_TEAM_KEY", "openai:m;key=MDAP_TEST_UNSET_KEY"})
	var got []string
	for _, k := range keys {
		got = append(got, string(k))
	}
	assert.Equal(t, []string{"abcd-and-more", "abcd"}, got, "4 bytes kept, 3 left out, the longer first")
	b, found := redact(keys, []byte("a abcd-and-more b abcd c xyz"))
	assert.True(t, found)
	assert.Equal(t, "a [REDACTED] b [REDACTED] c xyz", string(b))
	_, found = redact(keys, []byte("nothing held"))
	assert.False(t, found)
}
