package maker

import (
	"fmt"
	"sync"
)

// capSpender is the step loop's tests' Spender (maker/budget's Budget
// is a satellite, which the core's tests do not import): a reservation
// that would pass Cap (when positive) is refused with ErrBudget.
type capSpender struct {
	Cap             float64
	mu              sync.Mutex
	spent, reserved float64
}

func newCapSpender(cap float64) *capSpender { return &capSpender{Cap: cap} }

func (b *capSpender) Reserve(worst float64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Cap > 0 && b.spent+b.reserved+worst > b.Cap {
		return fmt.Errorf("%w: $%g spent, $%g in flight, $%g more", ErrBudget, b.spent, b.reserved, worst)
	}
	b.reserved += worst
	return nil
}

func (b *capSpender) Settle(worst, cost float64) {
	b.mu.Lock()
	b.reserved -= worst
	b.spent += cost
	b.mu.Unlock()
}

func (b *capSpender) Credit(dollars float64) {
	b.mu.Lock()
	b.spent += dollars
	b.mu.Unlock()
}

func (b *capSpender) Spent() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}
