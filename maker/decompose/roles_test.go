package decompose

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessagesReadBack(t *testing.T) {
	v := View{Family: "sum", Problem: json.RawMessage(`{"n":[1,2,3]}`), Composition: json.RawMessage(`{"op":"add"}`),
		Answers: []json.RawMessage{json.RawMessage(`3`), json.RawMessage(`3`)}}
	got, err := ReadView(sim.PromptText(Messages(Prompts{Compose: "Add them."}, RoleCompose, v)))
	require.NoError(t, err)
	assert.Equal(t, v, got)
	v = View{Family: "sum", Problem: json.RawMessage(`{"n":[1,2,3]}`), Candidates: []Proposal{
		{Subproblems: []json.RawMessage{json.RawMessage(`{"n":[1]}`), json.RawMessage(`{"n":[2,3]}`)}, Composition: json.RawMessage(`{"op":"add"}`)},
		{Subproblems: []json.RawMessage{json.RawMessage(`{"n":[1,2]}`), json.RawMessage(`{"n":[3]}`)}, Composition: json.RawMessage(`{"op":"add"}`)},
	}}
	got, err = ReadView(sim.PromptText(Messages(Prompts{}, RoleDiscriminate, v)))
	require.NoError(t, err)
	assert.Equal(t, v, got)
	_, err = ReadView("no data here")
	assert.Error(t, err)
}

func TestDecodersReadTheirFormats(t *testing.T) {
	out, err := DecodeAtomic(maker.Reply{Text: "```json\n{\"atomic\": false}\n```"})
	require.NoError(t, err)
	assert.Equal(t, false, out.Value)
	_, err = DecodeAtomic(maker.Reply{Text: `{"atomic": "yes"}`})
	assert.ErrorIs(t, err, maker.ErrFormat)
	n, err := DecodePick(maker.Reply{Text: `{"pick": 2}`}, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, err = DecodePick(maker.Reply{Text: `{"pick": 3}`}, 2)
	assert.ErrorIs(t, err, maker.ErrFormat)
	p, err := DecodeProposal(numFamily{}, 2, maker.Reply{Text: `{"composition": {"op": "add"}, "subproblems": [{"n": [1]}, {"n": [2, 3]}]}`})
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":[2,3]}`, string(p.Subproblems[1]))
	_, err = DecodeProposal(numFamily{}, 2, maker.Reply{Text: `{"composition": {}, "subproblems": [{"n": [1]}, {"n": [2]}, {"n": [3]}]}`})
	assert.ErrorIs(t, err, maker.ErrFormat, "over the breadth cap")
	_, err = DecodeProposal(numFamily{}, 2, maker.Reply{Text: `{"composition": {}, "subproblems": [{"n": [1]}]}`})
	assert.ErrorIs(t, err, maker.ErrFormat, "one subproblem is no split")
	a, err := DecodeAnswer(numFamily{}, nil, maker.Reply{Text: `{"answer": 6.0}`})
	require.NoError(t, err)
	assert.Equal(t, "6", string(a))
}

// FuzzRoleDecoders: no reply makes a decoder panic, and what a decoder
// accepts votes with a key that its own canonical text decodes to again.
func FuzzRoleDecoders(f *testing.F) {
	for _, s := range []string{`{"atomic": true}`, `{"pick": 1}`, `{"answer": 3}`, `{"subproblems": [{"n":[1]},{"n":[2]}], "composition": {"op":"add"}}`,
		"```json\n{\"answer\": 1e400}\n```", `{"subproblems": [null, {}], "composition": null}`, `[]`, `{"pick": -1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r := maker.Reply{Text: text}
		for _, dec := range []decoder{DecodeAtomic, decodeProposal(numFamily{}, 3), decodeAnswer(numFamily{}, nil)} {
			out, err := dec(r)
			if err != nil {
				continue
			}
			k, err := intent.Key(out)
			require.NoError(t, err)
			canon, err := outputJSON(out)
			require.NoError(t, err)
			v, err := valueOf(canon)
			require.NoError(t, err)
			k2, err := intent.Key(intent.Output{Value: v})
			require.NoError(t, err)
			assert.Equal(t, k, k2, "the journaled value keys as the vote did")
		}
		if n, err := DecodePick(r, 3); err == nil {
			assert.True(t, n >= 1 && n <= 3)
		}
	})
}

func TestFirstToKIsNotAheadByK(t *testing.T) {
	// Votes A B A B A: A reaches 3 at index 4 with a lead of one.
	seq := []uint64{1, 2, 1, 2, 1, 2, 2}
	draw := func(_ context.Context, i int) drawn { return drawn{out: intent.Output{Value: int(seq[i])}} }
	key := func(d drawn) (uint64, error) { return uint64(d.out.Value.(int)), nil }
	i, draws, err := firstToK(context.Background(), 3, 7, draw, key)
	require.NoError(t, err)
	assert.Equal(t, 4, i)
	assert.Equal(t, 1, draws[i].out.Value)
	assert.Len(t, draws, 5, "waves of k minus the leader's votes: 3, then 1, then 1")
	// The same votes under ahead-by-3 are undecided.
	_, err = vote.Race(context.Background(), vote.Config{K: 3, MaxSamples: 7, Parallel: 1}, func(_ context.Context, i int) vote.Sample[int] {
		return vote.Sample[int]{Key: seq[i]}
	})
	assert.ErrorIs(t, err, vote.ErrUndecided)
	_, _, err = firstToK(context.Background(), 3, 4, draw, key)
	assert.ErrorIs(t, err, vote.ErrUndecided)
	_, _, err = firstToK(context.Background(), 3, 9, func(context.Context, int) drawn { return drawn{err: errors.New("down")} }, key)
	assert.ErrorIs(t, err, vote.ErrTooManyErrors)
}

func TestEveryRoleIsOneValueForEachRoleInANewMap(t *testing.T) {
	p := EveryRole(0.9)
	require.Len(t, p, len(Roles))
	for _, r := range Roles {
		assert.Equal(t, 0.9, p[r], r)
	}
	p[RoleSolve] = 0.5
	assert.Equal(t, 0.9, EveryRole(0.9)[RoleSolve], "each call is a map of its own")
}
