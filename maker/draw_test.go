package maker

import (
	"context"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestDrawSeesWhatTheRaceSees draws every sample of a solved run again,
// on its own, and finds the verdicts and keys the run tallied.
func TestDrawSeesWhatTheRaceSees(t *testing.T) {
	model := &scripted{reply: noisy}
	var events []SampleEvent
	s := &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: 1}}, Model: model, OnSample: func(e SampleEvent) { events = append(events, e) }}
	task := &counter{target: 12}
	_, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NotEmpty(t, events)

	flagged := 0
	for _, e := range events {
		fresh := &counter{n: e.Step, target: 12}
		d, err := drawOne(s, context.Background(), SampleID{Step: e.Step, Index: e.Index}, fresh.Prompt(nil), fresh.Decode)
		require.NoError(t, err)
		assert.Equal(t, e.Flag, d.Flag, "step %d sample %d", e.Step, e.Index)
		assert.Equal(t, e.Usage.OutputTokens, d.Usage.OutputTokens)
		v := s.Judge(d.Reply, fresh.Decode)
		if d.Flag != nil {
			flagged++
			assert.Equal(t, d.Flag, v.Flag)
			continue
		}
		assert.Equal(t, v.Key, d.Key)
		key, err := s.Key(d.Output)
		require.NoError(t, err)
		assert.Equal(t, d.Key, key)
	}
	assert.Positive(t, flagged, "the noisy model's flags were drawn again")
}

func TestDrawFailuresAndMembers(t *testing.T) {
	msgs := (&counter{n: 4}).Prompt(nil)
	down := &scripted{reply: func(SampleID, string) (string, string) { return "", "error" }}
	d, err := drawOne(&Solver{Model: down}, context.Background(), SampleID{}, msgs, nil)
	require.NoError(t, err, "a failed call is a failed sample, not an error of Draw")
	assert.EqualError(t, d.Err, "provider down")

	ok := &scripted{reply: func(SampleID, string) (string, string) { return `{"next": 5}`, "stop" }}
	d, err = drawOne(&Solver{Model: ok}, context.Background(), SampleID{}, msgs, func(Reply) (intent.Output, error) { panic("boom") })
	require.NoError(t, err)
	require.ErrorIs(t, d.Err, ErrTaskPanic, "a panic in decode is a failed sample")

	cut := &scripted{reply: func(SampleID, string) (string, string) { return `{"next": 5}`, "length" }}
	d, err = drawOne(&Solver{Model: cut}, context.Background(), SampleID{}, msgs, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, d.Flag, ErrCutOff)

	ens, err := NewEnsemble(ok, cut, ok)
	require.NoError(t, err)
	for i := range 6 {
		d, err := drawOne(&Solver{Model: ens}, context.Background(), SampleID{Index: i}, msgs, nil)
		require.NoError(t, err)
		assert.Equal(t, i%3, d.Member, fmt.Sprint(i))
		assert.Equal(t, i%3 == 1, d.Flag != nil, "member 1 is cut off (sample %d)", i)
	}

	_, err = drawOne(&Solver{}, context.Background(), SampleID{}, msgs, nil)
	assert.ErrorIs(t, err, ErrNoModel)
}

// drawOne draws sample id of a step as Solve's races draw it, in a
// request of its own.
func drawOne(s *Solver, ctx context.Context, id SampleID, msgs []llms.MessageContent, decode func(Reply) (intent.Output, error)) (Drawn, error) {
	p, err := s.NewSampler()
	if err != nil {
		return Drawn{}, err
	}
	p.agent.perCall = nil // one sample: one request
	ds, err := p.DrawWave(ctx, id.Step, vote.Wave{First: id.Index, N: 1}, msgs, decode)
	if err != nil {
		return Drawn{}, err
	}
	return ds[0], nil
}
