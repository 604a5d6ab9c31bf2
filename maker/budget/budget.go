// Package budget is mdap's spending cap: a maker.Spender that a Solver
// (Solver.Budget), a batch (maker/batch's Runner and Builtin) and a
// calibration share.
package budget

import (
	"fmt"
	"sync"

	"github.com/mdap-go/mdap/maker"
)

// Budget is a spending cap in US dollars, shared by every Solver (and every
// task of a batch) that holds it. Before a request starts, its worst case
// (the prompt's estimated tokens, maker.EstimateTokens, as input and
// max_tokens of output for each choice, at the model's maker.Price) is
// reserved (Reserve); the
// request starts only if the money spent plus every reservation stays
// within the cap, and when it answers its reservation is replaced by what
// it cost. So, for a provider that bills no more than that worst case (no
// more output than max_tokens, a prompt of no more tokens than the
// estimate), the money spent never passes the cap, however many calls run
// at once. A nil *Budget caps and counts nothing. Safe for concurrent use;
// cost: a mutex per request.
type Budget struct {
	// Cap is the most that may be spent, in dollars. Zero or less means
	// no cap (the budget only counts).
	Cap float64

	mu       sync.Mutex
	spent    float64
	settled  float64 // of spent, what this budget's own calls cost
	ahead    float64 // of spent, what CreditAhead added and no Credit took yet
	reserved float64
}

var _ maker.Spender = (*Budget)(nil)

// New returns a budget of cap dollars.
func New(cap float64) *Budget { return &Budget{Cap: cap} }

// Spent returns the dollars spent so far: settled calls, and what
// Credit added (a resumed run's journaled steps).
func (b *Budget) Spent() float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// Settled returns the dollars the calls made under this budget cost:
// Spent without what Credit added. A batch uses it to say what one run
// spent, apart from what earlier runs had.
func (b *Budget) Settled() float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.settled
}

// Credit adds dollars already spent, such as the cost of the steps a
// resumed run replays from its journal, less what CreditAhead counted
// already. Negative amounts are ignored.
func (b *Budget) Credit(dollars float64) {
	if b == nil || dollars <= 0 {
		return
	}
	b.mu.Lock()
	take := min(dollars, b.ahead)
	b.ahead -= take
	b.spent += dollars - take
	b.mu.Unlock()
}

// CreditAhead adds dollars already spent that resumed runs will Credit
// again later (a batch's journaled steps, counted before their tasks
// resume): they count at once, and later Credits take from them first,
// up to the amount, so that nothing counts twice, whichever of the runs
// resume. Negative amounts are ignored.
func (b *Budget) CreditAhead(dollars float64) {
	if b == nil || dollars <= 0 {
		return
	}
	b.mu.Lock()
	b.spent += dollars
	b.ahead += dollars
	b.mu.Unlock()
}

// Reserve reserves worst dollars, or refuses with an *Error (wrapping
// maker.ErrBudget) when the money spent, the reservations and worst
// together would pass the cap.
func (b *Budget) Reserve(worst float64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Cap > 0 && b.spent+b.reserved+worst > b.Cap {
		return &Error{Cap: b.Cap, Spent: b.spent, InFlight: b.reserved, Worst: worst}
	}
	b.reserved += worst
	return nil
}

// Settle replaces a reservation by what the call cost.
func (b *Budget) Settle(worst, cost float64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.reserved -= worst
	if b.reserved < 1e-12 {
		b.reserved = max(b.reserved, 0)
	}
	b.spent += cost
	b.settled += cost
	b.mu.Unlock()
}

// Error is a call refused by a Budget. It wraps maker.ErrBudget.
type Error struct {
	// Cap, Spent and InFlight (the worst cases of the calls in flight)
	// are the budget's when the call was refused, Worst the call's own
	// worst case; all in dollars.
	Cap, Spent, InFlight, Worst float64
}

func (e *Error) Error() string {
	return fmt.Sprintf("spending cap $%.4f reached: spent $%.4f, and a call's worst case ($%.4f, with $%.4f in flight) would pass it; resume with a larger cap",
		e.Cap, e.Spent, e.Worst, e.InFlight)
}

// Unwrap returns maker.ErrBudget.
func (e *Error) Unwrap() error { return maker.ErrBudget }
