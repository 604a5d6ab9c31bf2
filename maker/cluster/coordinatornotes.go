package cluster

import (
	"context"
	"time"

	"github.com/mdap-go/mdap/maker/journal"
)

// DrawNoting is Draw within SetupTimeout, as a command opens its Drawer:
// for a route that no worker has served on the engine yet
// (Drawer.Served), it says through notef that the route's samples fail
// after DefaultNoWorker without one, and how to start one. Errors are
// Draw's; a failed look at the route says nothing.
func (c *Coordinator) DrawNoting(ctx context.Context, route string, notef func(format string, args ...any)) (*Drawer, error) {
	ctx, cancel := context.WithTimeout(ctx, SetupTimeout)
	defer cancel()
	d, err := c.Draw(ctx, route)
	if err != nil || route == "" {
		return d, err
	}
	if served, err := d.Served(ctx, route); err == nil && !served {
		notef("no worker has served %q on %s yet: samples fail after %s without one (start maker worker --nats %s with the same model flags)", route, c.cfg.URL, DefaultNoWorker, c.cfg.URL)
	}
	return d, nil
}

// JournalNoting is Journal within SetupTimeout and one lease (DefaultLeaseTTL,
// and 2 s): a resume waits out the lease of a coordinator that died,
// saying through notef that the journal named name is locked and how
// long it waits. Errors are Journal's.
func (c *Coordinator) JournalNoting(ctx context.Context, resume bool, name string, notef func(format string, args ...any)) (*journal.Journal, error) {
	ctx, cancel := context.WithTimeout(ctx, SetupTimeout+DefaultLeaseTTL+2*time.Second)
	defer cancel()
	return c.Journal(ctx, resume, func(wait time.Duration) {
		notef("%s is locked by another coordinator; waiting up to %s for its lease to expire (if it died)", name, wait)
	})
}
