package problems_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run is solved only with no error and an answer its check passed, or
// an unchecked answer where that is allowed; the summary says why not.
func TestSummarizeVerdict(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	res := func(c *bool) *decompose.Result {
		return &decompose.Result{Correct: c, Wall: 1500 * time.Millisecond, CriticalPath: 250 * time.Millisecond}
	}
	s := problems.Summarize(res(&yes), nil, false)
	assert.True(t, s.Solved)
	assert.Empty(t, s.Error)
	assert.Equal(t, 1.5, s.WallSeconds)
	assert.Equal(t, 0.25, s.CriticalPathSeconds)

	s = problems.Summarize(res(&no), nil, true)
	assert.False(t, s.Solved, "a check that refused is wrong, unchecked or not")
	assert.Equal(t, problems.ErrWrong.Error(), s.Error)

	assert.False(t, problems.Summarize(res(nil), nil, false).Solved, "no check, and a check was wanted")
	assert.True(t, problems.Summarize(res(nil), nil, true).Solved, "no check, allowed")

	s = problems.Summarize(res(&yes), errors.New("budget spent"), false)
	assert.False(t, s.Solved)
	assert.Equal(t, "budget spent", s.Error)
}

// The text of a real run names the answer, its check and every role that
// decided.
func TestSummaryWriteText(t *testing.T) {
	t.Parallel()
	res, err := problems.Solve(context.Background(), "multiply", []byte(`{"a":"12","b":"34"}`), problems.Options{
		Sim: decompose.SimConfig{Seed: 1, Roles: problems.SimRoles(decompose.SimRole{P: 1})}})
	require.NoError(t, err)
	var buf bytes.Buffer
	problems.Summarize(res, nil, false).WriteText(&buf, "multiply 12×34", []string{"sim"})
	out := buf.String()
	assert.Contains(t, out, `multiply 12×34 (model sim): answer "408", correct`)
	assert.Contains(t, out, fmt.Sprintf("%d nodes, depth %d; %d samples", res.Nodes, res.Depth, res.Samples))
	for r := range res.Roles {
		assert.Regexp(t, "(?m)^"+string(r)+` +\d`, out)
	}
	buf.Reset()
	problems.Summarize(&decompose.Result{}, errors.New("budget spent"), false).WriteText(&buf, "sort", []string{"a", "b"})
	assert.Contains(t, buf.String(), "sort (model a,b): no answer: budget spent\n")
}

func TestIsInputError(t *testing.T) {
	t.Parallel()
	_, err := problems.Solve(context.Background(), "nope", nil, problems.Options{})
	assert.True(t, problems.IsInputError(err), "an unknown family")
	_, err = problems.Solve(context.Background(), "sort", []byte(`{"list": "x"}`), problems.Options{})
	assert.True(t, problems.IsInputError(err), "not a problem: %v", err)
	assert.True(t, problems.IsInputError(fmt.Errorf("resume: %w", decompose.ErrJournalMismatch)))
	assert.False(t, problems.IsInputError(context.Canceled))
	assert.False(t, problems.IsInputError(errors.New("provider down")))
}

func TestRolePrices(t *testing.T) {
	t.Parallel()
	got, err := problems.RolePrices(map[string]string{"all": "1/2", "solve": "3/4"})
	require.NoError(t, err)
	assert.Len(t, got, len(decompose.Roles))
	assert.Equal(t, maker.Price{InputPerMillion: 3, OutputPerMillion: 4}, got[decompose.RoleSolve], "a role's own price over all")
	assert.Equal(t, maker.Price{InputPerMillion: 1, OutputPerMillion: 2}, got[decompose.RoleCompose])
	none, err := problems.RolePrices(nil)
	assert.NoError(t, err)
	assert.Nil(t, none)
	for _, v := range []string{"x", "1", "1/", "-1/1", "1/-1", "NaN/1", "1/Inf", fmt.Sprint(problems.MaxPrice*2, "/1")} {
		_, err := problems.RolePrices(map[string]string{"solve": v})
		require.Error(t, err, v)
		assert.ErrorIs(t, err, decompose.ErrConfig, v)
		assert.Contains(t, err.Error(), "solve="+v+": ", "the error names the entry")
	}
	_, err = problems.RolePrices(map[string]string{"nobody": "1/1"})
	assert.ErrorIs(t, err, decompose.ErrConfig)
	assert.Contains(t, err.Error(), "nobody=1/1")
}
