package maker

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// honoursN is a named model that answers a request for n samples with n
// choices (as a provider that honours n does), recording each request's n.
type honoursN struct {
	*named
	mu sync.Mutex
	ns []int
}

func (m *honoursN) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	n := max(o.N, 1)
	m.mu.Lock()
	m.ns = append(m.ns, n)
	m.mu.Unlock()
	id, _ := SampleIDFrom(ctx)
	resp := &llms.ContentResponse{}
	for j := range n {
		sub := WithSampleID(ctx, SampleID{Step: id.Step, Index: id.Index + j})
		r, err := m.named.GenerateContent(sub, msgs)
		if err != nil {
			return nil, err
		}
		resp.Choices = append(resp.Choices, r.Choices...)
	}
	return resp, nil
}

func (m *honoursN) requests() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.ns)
}

// TestEscalatedRaceDrawsOneSampleARequest: an escalated race draws one
// sample a request, from one model or from each member of an Ensemble in
// turn (a request of n choices would take them all from one member),
// while the run's own races draw several.
func TestEscalatedRaceDrawsOneSampleARequest(t *testing.T) {
	solve := func(esc llms.Model) {
		t.Helper()
		weak := &honoursN{named: split("weak")}
		s := &Solver{
			Config: Config{Vote: vote.Config{K: 3, Parallel: 4}, SamplesPerCall: 4, Escalation: &Escalation{Policy: EscalateModel, After: 4, Model: esc}},
			Model:  weak,
		}
		rep, err := s.Solve(context.Background(), &counter{target: 3})
		require.NoError(t, err)
		require.Equal(t, 3, rep.Escalated, "every step contested and escalated")
		assert.Greater(t, slices.Max(weak.requests()), 1, "the run's own races draw several samples a request")
	}
	strong := &honoursN{named: right("strong")}
	solve(strong)
	a, b := &honoursN{named: right("a")}, &honoursN{named: right("b")}
	ens, err := NewEnsemble(a, b)
	require.NoError(t, err)
	solve(ens)
	for _, m := range []*honoursN{strong, a, b} {
		require.NotEmpty(t, m.requests(), "%s asked", m.name)
		for _, n := range m.requests() {
			assert.Equal(t, 1, n, "%s was asked for %d samples in one request", m.name, n)
		}
	}
}
