package spec

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// countSpec counts from 0 to 3, one step at a time; with checked, its
// checker is the rule "the new n is the old n plus one", written out for
// the states the task has.
func countSpec(t *testing.T, checked bool) *Spec {
	t.Helper()
	checker := ""
	if checked {
		var cases []string
		for n := range 3 {
			cases = append(cases, fmt.Sprintf(`{"properties": {"before": {"properties": {"n": {"const": %d}}}, "answer": {"properties": {"state": {"properties": {"n": {"const": %d}}}}}}}`, n, n+1))
		}
		checker = fmt.Sprintf(`"checker": {"anyOf": [%s, %s, %s]},`, cases[0], cases[1], cases[2])
	}
	s, err := Parse([]byte(fmt.Sprintf(`{
		"name": "count", "system": "Add one to n; done at 3.",
		"initial_state": {"n": 0},
		"answer": {"type": "object", "required": ["state", "done"]},
		%s
		"max_steps": 5,
		"script": [{"state": {"n": 1}, "done": false}, {"state": {"n": 2}, "done": false}, {"state": {"n": 3}, "done": true}]}`, checker)))
	require.NoError(t, err)
	return s
}

var nRE = regexp.MustCompile(`State: \{"n":\s*(\d+)\}`)

// agreeing answers every sample of every step alike: n plus one, except
// at n = wrongAt, where every sample agrees on n plus two (an error the
// vote cannot see).
type agreeing struct{ wrongAt int }

func (m agreeing) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	text := fmt.Sprint(msgs)
	sm := nRE.FindStringSubmatch(text)
	if sm == nil {
		return nil, fmt.Errorf("no state in %q", text)
	}
	n, _ := strconv.Atoi(sm[1])
	next := n + 1
	if n == m.wrongAt {
		next = n + 2
	}
	reply := fmt.Sprintf(`{"state": {"n": %d}, "done": %v}`, next, next >= 3)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply, StopReason: "stop"}}}, nil
}

func (m agreeing) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// TestCheckerRefusesAnAgreeingError: at step 1 every sample agrees on a
// wrong answer, so the vote decides it at once. Without a checker the run
// "succeeds" with a skipped count; with the spec's checker the step is
// refused (maker.ErrRefused), nothing of it applied, and the report
// counts the checked step before it. With Verify answering unchecked
// (the checker undone), the checked run decides the wrong step too.
func TestCheckerRefusesAnAgreeingError(t *testing.T) {
	solver := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: agreeing{wrongAt: 1}}

	plain := New(countSpec(t, false))
	rep, err := solver.Solve(context.Background(), plain)
	require.NoError(t, err, "the vote cannot see an error every sample makes")
	assert.JSONEq(t, `{"n": 3}`, string(plain.State()))
	assert.Equal(t, 2, rep.Steps, "0 -> 1 -> 3: a step skipped")
	assert.Zero(t, rep.Checked)
	assert.Equal(t, 2, rep.VoteOnly)

	checked := New(countSpec(t, true))
	rep, err = solver.Solve(context.Background(), checked)
	require.ErrorIs(t, err, maker.ErrRefused)
	require.ErrorIs(t, err, maker.ErrStep)
	assert.Contains(t, err.Error(), "step 1")
	assert.JSONEq(t, `{"n": 1}`, string(checked.State()), "the refused winner was not applied")
	assert.Equal(t, 1, rep.Steps)
	assert.Equal(t, 1, rep.Checked)
	assert.Zero(t, rep.VoteOnly)

	// A right run: every answer checked; counted again on resume.
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: agreeing{wrongAt: -1}, Journal: j}
	rep, err = s.Solve(context.Background(), New(countSpec(t, true)))
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, 3, rep.Checked)
	assert.Zero(t, rep.VoteOnly)
	assert.Equal(t, [2]int{3, 0}, [2]int{rep.Checked, rep.VoteOnly}, "checked steps 3, vote-only 0")
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	s.Journal = j
	again, err := s.Solve(context.Background(), New(countSpec(t, true)))
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, 3, again.Checked, "replayed from the journal")
}

// TestCheckerInTheSpec: a checker that is not a JSON Schema, or that
// refuses the script's own answers, is a spec error; tool calls are not
// checked.
func TestCheckerInTheSpec(t *testing.T) {
	base := `{"name": "c", "system": "s", "initial_state": {"n": 0}, "answer": {"type": "object"}, "tools": ["grep"], %s
		"script": [{"tool_intent": {"tool": "grep", "args": {"pattern": "x"}}}, {"state": {"n": 1}}]}`
	_, err := Parse([]byte(fmt.Sprintf(base, `"checker": {"type": 7},`)))
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"checker" is not a valid JSON Schema`)

	_, err = Parse([]byte(fmt.Sprintf(base, `"checker": {"properties": {"answer": {"properties": {"state": {"properties": {"n": {"const": 2}}}}}}},`)))
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"script" step 1: its checker refuses the script's answer`)

	sp, err := Parse([]byte(fmt.Sprintf(base, `"checker": {"properties": {"answer": {"required": ["state"]}}},`)))
	require.NoError(t, err)
	task := New(sp)
	out, err := task.Decode(maker.Reply{Text: `{"tool_intent": {"tool": "grep", "args": {"pattern": "x"}}}`})
	require.NoError(t, err)
	checked, err := task.Verify(context.Background(), out)
	require.NoError(t, err)
	assert.False(t, checked, "a tool call is vote-only")
	out, err = task.Decode(maker.Reply{Text: `{"done": true}`})
	require.NoError(t, err)
	checked, err = task.Verify(context.Background(), out)
	assert.True(t, checked)
	assert.ErrorContains(t, err, "checker:")
}
