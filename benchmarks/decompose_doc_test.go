package benchmarks

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The decompose report's place in docs/decompose.md.
const (
	decomposeDoc      = "../docs/decompose.md"
	decomposeDocStart = "<!-- decompose report: generated, do not edit -->\n"
	decomposeDocEnd   = "<!-- end of decompose report -->"
)

// TestDecomposeDocIsTheReport: the bench figures in docs/decompose.md are
// the committed report's (results/decompose/report.json) as the report
// renders them, not typed by hand. MDAP_WRITE_DECOMPOSE_DOC=1 writes them
// there from the report.
func TestDecomposeDocIsTheReport(t *testing.T) {
	data, err := os.ReadFile("results/decompose/report.json")
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(data, &rep))
	require.NotNil(t, rep.Decompose, "the report has the decompose suite")
	var b strings.Builder
	writeDecompose(&b, rep.Decompose)
	want := strings.Replace(b.String(), "## Voted decomposition (decompose suite)\n\n", "", 1)
	doc, err := os.ReadFile(decomposeDoc)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(doc), decomposeDocStart)
	require.True(t, ok, "docs/decompose.md has the start marker")
	got, after, ok := strings.Cut(rest, decomposeDocEnd)
	require.True(t, ok, "docs/decompose.md has the end marker")
	if os.Getenv("MDAP_WRITE_DECOMPOSE_DOC") == "1" {
		require.NoError(t, os.WriteFile(decomposeDoc, []byte(before+decomposeDocStart+want+decomposeDocEnd+after), 0o644))
		return
	}
	require.Equal(t, want, got, "docs/decompose.md's figures are not the report's: run MDAP_WRITE_DECOMPOSE_DOC=1 go test -run TestDecomposeDocIsTheReport ./benchmarks")
}
