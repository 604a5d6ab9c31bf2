package maker

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// named is a scripted model with an identity, recording the sample
// indices it was asked.
type named struct {
	scripted
	name  string
	mu    sync.Mutex
	asked []int
}

func (m *named) Identity() string { return m.name }

func (m *named) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	id, _ := SampleIDFrom(ctx)
	m.mu.Lock()
	m.asked = append(m.asked, id.Index)
	m.mu.Unlock()
	return m.scripted.GenerateContent(ctx, msgs, opts...)
}

// split answers a counter step with two answers in turn: its votes never
// lead, so every step is contested. right always answers right.
func split(name string) *named {
	return &named{name: name, scripted: scripted{reply: func(id SampleID, prompt string) (string, string) {
		return `{"next": ` + strconv.Itoa(current(prompt)+1+id.Index%2) + `}`, "stop"
	}}}
}

func right(name string) *named {
	return &named{name: name, scripted: scripted{reply: func(_ SampleID, prompt string) (string, string) {
		return `{"next": ` + strconv.Itoa(current(prompt)+1) + `}`, "stop"
	}}}
}

// TestEscalateModelAsksAnotherModel: EscalateModel decides a contested
// step with a model other than the run's. Given an Ensemble that holds
// the run's own model, the escalated race asks only the other members
// (before, sample i of it went to member i mod n: the model whose votes
// split drew every other sample again); given the run's model itself,
// Solve refuses with ErrConfig rather than ask it again.
func TestEscalateModelAsksAnotherModel(t *testing.T) {
	const after = 4
	weak, strong := split("weak"), right("strong")
	ens, err := NewEnsemble(weak, strong)
	require.NoError(t, err)
	task := &counter{target: 3}
	var recs []journal.StepRecord
	s := &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: 1}, Escalation: &Escalation{Policy: EscalateModel, After: after, Model: ens}}, Model: weak,
		Progress: func(e Event) { recs = append(recs, *e.Record) }}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Escalated, "every step contested and escalated")
	// Each step's samples name the model that drew them: the first race's
	// the run's (left out), the escalated race's the strong one.
	for _, rec := range recs {
		require.Len(t, rec.Samples, after+2)
		for _, x := range rec.Samples {
			if x.Index < after {
				assert.Empty(t, x.Model, "step %d sample %d", rec.Step, x.Index)
			} else {
				assert.Equal(t, "strong", x.Model, "step %d sample %d", rec.Step, x.Index)
			}
		}
	}
	assert.Zero(t, task.wrong)
	for _, i := range weak.asked {
		assert.Less(t, i, after, "the model whose votes split was asked sample %d of an escalated race", i)
	}
	assert.Len(t, weak.asked, 3*after, "the weak model drew the first races only")
	assert.Len(t, strong.asked, 3*2, "the strong model decided each step at k = 2")

	// The run's own model as the escalation model: refused.
	same := &Solver{Config: Config{Escalation: &Escalation{Policy: EscalateModel, Model: split("weak")}}, Model: weak}
	_, err = same.Solve(context.Background(), &counter{target: 3})
	require.ErrorIs(t, err, ErrConfig)
	assert.Contains(t, err.Error(), "is the run's own model")
	assert.Len(t, weak.asked, 3*after, "no sample drawn")

	// The run an ensemble, the escalation model one of its members plus
	// another: only the other is asked.
	a, b, c := split("a"), split("b"), right("c")
	run, err := NewEnsemble(a, b)
	require.NoError(t, err)
	esc, err := NewEnsemble(b, c)
	require.NoError(t, err)
	s = &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: 1}, Escalation: &Escalation{Policy: EscalateModel, After: after, Model: esc}}, Model: run}
	rep, err = s.Solve(context.Background(), &counter{target: 2})
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Escalated)
	assert.Len(t, b.asked, 2*after/2, "member b drew its share of the first races only")
	assert.Len(t, c.asked, 2*2)
}
