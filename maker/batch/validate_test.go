package batch_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuiltinValidateNamesTheField checks that every refusal of
// Builtin.Validate and Runner.Validate names the field (what maker solve
// maps to its flag) and its value, and that a tool selection's parser
// error is still found.
func TestBuiltinValidateNamesTheField(t *testing.T) {
	for _, c := range []struct {
		b     batch.Builtin
		field string
		value any
	}{
		{batch.Builtin{Config: maker.Config{MaxSteps: -1}}, "MaxSteps", -1},
		{batch.Builtin{Config: maker.Config{MaxTokens: -1}}, "MaxTokens", -1},
		{batch.Builtin{Config: maker.Config{SamplesPerCall: maker.SamplesPerCallAuto - 1}}, "SamplesPerCall", maker.SamplesPerCallAuto - 1},
		{batch.Builtin{Config: maker.Config{SamplesPerCall: maker.MaxSamplesPerCall + 1}}, "SamplesPerCall", maker.MaxSamplesPerCall + 1},
		{batch.Builtin{Tools: "everything"}, "Tools", "everything"},
		{batch.Builtin{Config: maker.Config{ToolDeclaration: "loud"}}, "ToolDeclaration", "loud"},
		{batch.Builtin{Root: "/no/such/folder"}, "Root", "/no/such/folder"},
	} {
		err := c.b.Validate()
		var fe *maker.FieldError
		require.ErrorAs(t, err, &fe, "%+v", c.b)
		require.ErrorIs(t, err, batch.ErrConfig)
		assert.Equal(t, "batch.Builtin", fe.Config)
		assert.Equal(t, c.field, fe.Fields[0].Name, "%v", err)
		assert.Equal(t, c.value, fe.Fields[0].Value, "%v", err)
	}
	assert.ErrorIs(t, (&batch.Builtin{Tools: "everything"}).Validate(), categories.ErrUnknownName)
	assert.ErrorIs(t, (&batch.Builtin{Config: maker.Config{Vote: vote.Config{K: -1}}}).Validate(), vote.ErrConfig)
	assert.NoError(t, (&batch.Builtin{Root: t.TempDir(), Tools: "read_only", Config: maker.Config{ToolDeclaration: maker.DeclarePrompt}}).Validate())
	assert.NoError(t, (&batch.Builtin{}).Validate(), "the zero value")
	assert.NoError(t, (&batch.Builtin{Config: maker.Config{SamplesPerCall: maker.SamplesPerCallAuto}}).Validate(), "auto (TestSolveMaxCostCapsTheWholeBatch found it refused)")

	build := func(context.Context, batch.Job) (*batch.Unit, error) { return nil, nil }
	for _, r := range []batch.Runner{{}, {Build: build, Concurrency: -1}, {Build: build, Concurrency: batch.MaxConcurrency + 1}} {
		err := r.Validate()
		var fe *maker.FieldError
		require.ErrorAs(t, err, &fe, "%+v", r.Concurrency)
		_, rerr := r.Run(context.Background(), nil)
		assert.ErrorIs(t, rerr, batch.ErrConfig, "Run refuses what Validate refuses")
	}
	assert.NoError(t, (&batch.Runner{Build: build, Concurrency: batch.MaxConcurrency}).Validate())
}
