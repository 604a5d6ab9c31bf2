package multiply_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// pricedModel is a model that knows its price (maker.Priced), as
// models.Open makes one from a spec's =IN/OUT.
type pricedModel struct {
	llms.Model
	price maker.Price
}

func (m pricedModel) Price() maker.Price { return m.price }

// Each role's samples cost its own price: Settings.Prices, else its
// model's own, else Solver.Price; prices change no decision.
func TestEachRoleCostsItsOwnPrice(t *testing.T) {
	t.Parallel()
	fam := multiply.Family{}
	in := multiply.Generate(5, 5, 5)
	for _, st := range []decompose.Settings{{}, {Strategy: decompose.StrategyFirstToK}, {Discriminate: true}} {
		solve := func(prices map[decompose.Role]maker.Price, priced map[decompose.Role]maker.Price) *decompose.Result {
			sims, err := decompose.NewSim(fam, fam, simConfig(8, 0.9, 3, 0))
			require.NoError(t, err)
			ms := sims.Models()
			for r, p := range priced {
				ms[r] = pricedModel{Model: ms[r], price: p}
			}
			s := st
			s.Solver.Price, s.Prices = price, prices
			res, err := decompose.Solve(context.Background(), fam, in, decompose.Config{Settings: s, Models: ms})
			require.NoError(t, err)
			return res
		}
		double := maker.Price{InputPerMillion: 2 * price.InputPerMillion, OutputPerMillion: 2 * price.OutputPerMillion}
		triple := maker.Price{InputPerMillion: 3 * price.InputPerMillion, OutputPerMillion: 3 * price.OutputPerMillion}
		base := solve(nil, nil)
		own := solve(map[decompose.Role]maker.Price{decompose.RoleSolve: double, decompose.RoleDiscriminate: double},
			map[decompose.Role]maker.Price{decompose.RoleCompose: triple, decompose.RoleSolve: triple})
		for r, b := range base.Roles {
			o := own.Roles[r]
			require.Equal(t, b.Samples, o.Samples, "%s %s: prices change no decision", st.Strategy, r)
			require.Positive(t, b.Cost, r)
			factor := 1.0
			switch r {
			case decompose.RoleSolve, decompose.RoleDiscriminate:
				factor = 2 // Settings.Prices, over the model's own
			case decompose.RoleCompose:
				factor = 3 // the model's own
			}
			assert.InDelta(t, factor*b.Cost, o.Cost, 1e-12, "%s %s", st.Strategy, r)
		}
	}
}
