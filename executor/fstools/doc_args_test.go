package fstools

import (
	"os"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocListsEveryBuiltinArgument: the package doc's list of the
// built-in tools' arguments is the schemas', line for line.
func TestDocListsEveryBuiltinArgument(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	doc := string(b)
	e := newExec(t, t.TempDir())
	n := 0
	for _, name := range e.Registered() {
		args, ok := e.ToolArgs(name)
		require.True(t, ok)
		assert.Contains(t, doc, "//\t"+name+" ", "tool %s is listed", name)
		for _, a := range args {
			line := executor.ArgLine(a)
			assert.True(t, strings.Contains(doc, " "+line+"\n"), "doc.go lacks %q", line)
			n++
		}
	}
	assert.Equal(t, n, strings.Count(doc, ", required)")+strings.Count(doc, "(integer)")+strings.Count(doc, "(string)")+strings.Count(doc, "(boolean)")+strings.Count(doc, "(array of string)"),
		"no argument listed that the schemas lack")
}
