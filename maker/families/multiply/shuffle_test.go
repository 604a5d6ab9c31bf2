package multiply_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// orders records, per discriminator call, the candidates as shown.
type orders struct {
	llms.Model
	mu    sync.Mutex
	shown map[int][]string // node salt (the sample's step) → each vote's order
}

func (o *orders) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	id, _ := maker.SampleIDFrom(ctx)
	_, cands, _ := strings.Cut(sim.PromptText(msgs), "CANDIDATES:")
	o.mu.Lock()
	o.shown[id.Step] = append(o.shown[id.Step], cands)
	o.mu.Unlock()
	return o.Model.GenerateContent(ctx, msgs, opts...)
}

// Ahead-by-k shows each discriminator vote the candidates in a fresh
// order; the first-to-K baseline in the same order every vote.
func TestDiscriminatorsSeeShuffledCandidates(t *testing.T) {
	t.Parallel()
	for _, strat := range []decompose.Strategy{decompose.StrategyAhead, decompose.StrategyFirstToK} {
		fam := multiply.Family{}
		sims, err := decompose.NewSim(fam, fam, simConfig(2, 0.6, 4, 0))
		require.NoError(t, err)
		models := sims.Models()
		rec := &orders{Model: models[decompose.RoleDiscriminate], shown: map[int][]string{}}
		models[decompose.RoleDiscriminate] = rec
		_, err = decompose.Solve(context.Background(), fam, multiply.Generate(2, 4, 4),
			decompose.Config{Settings: decompose.Settings{Strategy: strat, Discriminate: true, K: map[decompose.Role]int{decompose.RoleDiscriminate: 3}}, Models: models})
		require.NoError(t, err)
		varied, votes := 0, 0
		for _, shown := range rec.shown {
			votes += len(shown)
			for _, s := range shown[1:] {
				if s != shown[0] {
					varied++
					break
				}
			}
		}
		require.NotEmpty(t, rec.shown)
		if strat == decompose.StrategyAhead {
			assert.Positive(t, varied, "%d votes at %d nodes, all in one order", votes, len(rec.shown))
		} else {
			assert.Zero(t, varied, "the baseline's order is fixed")
		}
	}
}
