package maker

import "github.com/tmc/langchaingo/llms"

// cost prices the run: each model's usage at its own price (Priced) or at
// Solver.Price.
func (s *Solver) cost(rep *Report, ms []llms.Model) {
	for i := range rep.Models {
		rep.Models[i].Cost = s.priceOf(ms, i).Cost(rep.Models[i].Usage)
	}
	rep.Cost = s.spentIn(rep, ms)
}

// priceOf is member i's price: its own (Priced) or Solver.Price.
func (s *Solver) priceOf(ms []llms.Model, i int) Price {
	if i < len(ms) {
		if p, ok := ms[i].(Priced); ok {
			return p.Price()
		}
	}
	return s.Price
}

// CostOf returns what rep's usage costs at the solver's prices (each
// model's own, Priced, else Price), without changing rep: the dollars
// spent so far, for a Progress callback whose Report.Cost is not yet set.
func (s *Solver) CostOf(rep *Report) float64 { return s.spentIn(rep, members(s.Model)) }

// spentIn is what rep's usage cost, without changing rep.
func (s *Solver) spentIn(rep *Report, ms []llms.Model) float64 {
	sum := 0.0
	for i := range rep.Models {
		sum += s.priceOf(ms, i).Cost(rep.Models[i].Usage)
	}
	return sum
}
