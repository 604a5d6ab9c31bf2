package hanoi_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestDecodeKeys(t *testing.T) {
	task, err := hanoi.New(3)
	require.NoError(t, err)
	paper, err := task.Decode(maker.Reply{Text: "move = [1, 0, 2]\nnext_state = [[3, 2], [], [1]]"})
	require.NoError(t, err)
	asJSON, err := task.Decode(maker.Reply{Text: "```json\n{\"next_state\": [[3, 2], [], [1.0]], \"move\": [1, 0, 2]}\n```"})
	require.NoError(t, err)
	kp, err := intent.Key(paper)
	require.NoError(t, err)
	kj, err := intent.Key(asJSON)
	require.NoError(t, err)
	assert.Equal(t, kp, kj, "the paper's format and JSON vote together")
	assert.Nil(t, paper.Intent)

	other, err := task.Decode(maker.Reply{Text: "move = [1, 0, 1]\nnext_state = [[3, 2], [1], []]"})
	require.NoError(t, err)
	ko, err := intent.Key(other)
	require.NoError(t, err)
	assert.NotEqual(t, kp, ko)
}

func TestDecodeFlags(t *testing.T) {
	task, err := hanoi.New(3)
	require.NoError(t, err)
	_, err = task.Decode(maker.Reply{Text: "move = [1, 0, 3]\nnext_state = [[3, 2], [], [1]]"})
	assert.ErrorIs(t, err, maker.ErrFormat)
	assert.ErrorIs(t, err, hanoi.ErrFormat)
	_, err = task.Decode(maker.Reply{Text: `{"move": [1, 0, 2], "next_state": [[3, 2], [], [1]], "extra": 1}`})
	assert.ErrorIs(t, err, maker.ErrFormat)
	_, err = task.Decode(maker.Reply{ToolCalls: []llms.ToolCall{{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "read_file", Arguments: "{}"}}}})
	assert.ErrorIs(t, err, maker.ErrFormat)

	_, err = task.Decode(maker.Reply{Text: "I do not know."})
	assert.ErrorIs(t, err, intent.ErrNoAnswer)
	assert.NotErrorIs(t, err, maker.ErrFormat, "no answer at all is unparseable, not a format flag")
}

func TestApplyReplaysJournalValues(t *testing.T) {
	// A winner that went through JSON (numbers as float64) applies as the
	// decoded one does.
	a, b := mustTask(t, 4), mustTask(t, 4)
	for range 15 {
		text, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: sim.PromptText(a.Prompt(nil))})
		require.NoError(t, err)
		out, err := a.Decode(maker.Reply{Text: text})
		require.NoError(t, err)
		raw, err := json.Marshal(out.Value)
		require.NoError(t, err)
		var replayed any
		require.NoError(t, json.Unmarshal(raw, &replayed))

		doneA, err := a.Apply(out, nil)
		require.NoError(t, err)
		doneB, err := b.Apply(intent.Output{Value: replayed}, nil)
		require.NoError(t, err)
		assert.Equal(t, doneA, doneB)
		assert.Equal(t, a.State(), b.State())
	}
	assert.True(t, a.Solved())
	assert.True(t, b.Solved())

	_, err := mustTask(t, 3).Apply(intent.Output{Intent: &intent.ToolIntent{Tool: "read_file"}}, nil)
	assert.ErrorIs(t, err, hanoi.ErrFormat)
	_, err = mustTask(t, 3).Apply(intent.Output{Value: "move"}, nil)
	assert.ErrorIs(t, err, hanoi.ErrFormat)
}

func mustTask(t *testing.T, n int) *hanoi.Task {
	t.Helper()
	task, err := hanoi.New(n)
	require.NoError(t, err)
	return task
}

func TestSolverOnSimulatedModel(t *testing.T) {
	// The whole loop: the solver votes on the simulated model's replies to
	// the real prompts, through the real parser.
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate, cfg.WrongAnswers = 3, 0.85, 0.05, 4
	model, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	task := mustTask(t, 6)
	rep, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: model}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, 63, rep.Steps)
	assert.True(t, task.Solved())
	assert.Zero(t, task.WrongSteps())
	assert.Positive(t, rep.Flagged, "red flags were drawn and thrown away")
}

func TestSolverRunsAreScheduleIndependent(t *testing.T) {
	// With correlated errors and a small k some wrong answers win; which
	// ones must not depend on the goroutine schedule or on Parallel.
	run := func(parallel int) (maker.Report, *hanoi.Task) {
		cfg := sim.Config{Seed: 9, P: 0.7, WrongAnswers: 1, FlagRate: 0.05, Latency: sim.UniformLatency(0, 200*time.Microsecond)}
		model, err := sim.New(hanoi.Oracle{}, cfg)
		require.NoError(t, err)
		task := mustTask(t, 6)
		rep, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2, Parallel: parallel}}, Model: model}).Solve(context.Background(), task)
		require.NoError(t, err)
		return rep, task
	}
	_, seq := run(1)
	repA, a := run(4)
	repB, b := run(4)
	assert.Positive(t, seq.WrongSteps(), "the setting does produce wrong winners")
	for _, task := range []*hanoi.Task{a, b} {
		assert.Equal(t, seq.WrongSteps(), task.WrongSteps())
		assert.Equal(t, seq.State(), task.State())
	}
	assert.Equal(t, repA.Valid, repB.Valid)
	assert.Equal(t, repA.Flagged, repB.Flagged)
	assert.Equal(t, repA.Usage.InputTokens, repB.Usage.InputTokens)
	assert.Equal(t, repA.Usage.OutputTokens, repB.Usage.OutputTokens)
}
