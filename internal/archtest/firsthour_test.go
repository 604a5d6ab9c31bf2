package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goBuildOut is a documented build line's -o target.
var goBuildOut = regexp.MustCompile(`go build -o (\S+) \./cmd/maker`)

// TestDocumentedBuildLeavesMakerOnPath checks every build line the README
// and docs/ give a newcomer: `go build -o X ./cmd/maker` writes X/maker
// when X is a folder, and the repository has a folder called maker, so
// `-o maker` left the binary at maker/maker and the next line's `maker`
// was "command not found". Each target must name a file whose folder is
// then put on PATH, not a folder of the checkout.
func TestDocumentedBuildLeavesMakerOnPath(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	docs = append(docs, filepath.Join(root, "README.md"))
	seen := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range goBuildOut.FindAllStringSubmatch(string(text), -1) {
			seen++
			out := m[1]
			assert.Equal(t, "maker", filepath.Base(out), "%s: %q does not build a binary called maker", doc, m[0])
			if st, err := os.Stat(filepath.Join(root, out)); err == nil {
				assert.False(t, st.IsDir(), "%s: %q: %s is a folder of the checkout, so go build writes %s/maker", doc, m[0], out, out)
			}
		}
	}
	assert.NotZero(t, seen, "the README gives no build line")
}
