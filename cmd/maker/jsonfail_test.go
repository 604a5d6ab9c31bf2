package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The --json summaries of solve, multiply (and the other decomposition
// commands) and parse return their write error, a failure (exit 1), rather
// than dropping it and leaning on run's checkedWriter: an encoding error
// (a value JSON cannot say) never reaches a writer at all.
func TestJSONSummaryWriteErrorFailsTheCommand(t *testing.T) {
	t.Parallel()
	t.Run("solve", func(t *testing.T) {
		f := &solveFlags{JSON: true}
		err := f.report(brokenWriter{}, "tasks.jsonl", batch.Summary{}, nil, false)
		require.Error(t, err)
		assert.False(t, isUsage(err))
		var ee *exitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, exitFailed, ee.code)
	})
	t.Run("multiply", func(t *testing.T) {
		f := &decompFlags{}
		cmd := decompCommand("multiply", "", "", "", f, nil)
		require.NoError(t, cmd.ParseFlags([]string{"--json"}))
		cmd.SetOut(brokenWriter{})
		cmd.SetContext(context.Background())
		right := true
		err := f.solveWith(cmd, "multiply", "12 × 34", false, func(context.Context, problems.Options) (*decompose.Result, error) {
			return &decompose.Result{Correct: &right}, nil
		})
		var ee *exitError
		require.ErrorAs(t, err, &ee, "a solved run whose summary was lost")
		assert.Equal(t, exitFailed, ee.code)
	})
	t.Run("parse", func(t *testing.T) {
		reply := filepath.Join(t.TempDir(), "reply.txt")
		require.NoError(t, os.WriteFile(reply, []byte(`{"answer": 1}`), 0o600))
		cmd := newParse()
		require.NoError(t, cmd.ParseFlags([]string{"--json"}))
		cmd.SetOut(brokenWriter{})
		cmd.SetIn(&bytes.Buffer{})
		err := cmd.RunE(cmd, []string{reply})
		var ee *exitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, exitFailed, ee.code)
	})
}
