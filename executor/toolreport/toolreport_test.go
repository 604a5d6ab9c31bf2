package toolreport_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/executor/toolreport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReportListsEveryToolThenTheIndexTool(t *testing.T) {
	e, err := fstools.New(t.TempDir(), executor.WithTaxonomy(categories.Builtin()))
	require.NoError(t, err)
	defer e.Close()
	r := toolreport.Of(e)
	require.Len(t, r.Tools, len(e.Registered())+1)
	assert.Equal(t, categories.IndexTool, r.Tools[len(r.Tools)-1].Name, "the index tool last")
	var readFile *toolreport.Tool
	for i := range r.Tools {
		if r.Tools[i].Name == "read_file" {
			readFile = &r.Tools[i]
		}
	}
	require.NotNil(t, readFile)
	assert.NotEmpty(t, readFile.Arguments)
	assert.True(t, json.Valid(readFile.Schema))

	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	text := out.String()
	assert.True(t, strings.HasPrefix(text, r.Inventory.String()), "the inventory first")
	assert.Contains(t, text, "\nread_file\n  "+executor.ArgLine(readFile.Arguments[0])+"\n")
	assert.True(t, strings.HasSuffix(text, categories.IndexTool+"\n  no arguments\n"), text)

	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"tools":[{"name":`)
}
