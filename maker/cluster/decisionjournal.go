package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mdap-go/mdap/maker/journal"
)

// TaskDecisionStore opens the journal of task of queue on the engine as
// a line store, for a journal other than a step loop's: a decomposition's
// decisions (decompose.Config.JournalStore, which SolveBatch gives a
// "multiply", "sort" or "problem" task). It is the journal TaskJournal
// opens, on the same subject (mdap.journals.<queue>.<task>) and lease
// (<queue>.<task>), so the same credentials reach it and maker nats ls
// and rm see it; existing lines are resumed, none starts a new journal.
//
// Guarantees: the lease excludes every other coordinator while the store
// is open (until Close, or LeaseTTL after its holder stops refreshing
// it), and a line is stored on the engine (acknowledged, by a majority
// of a cluster's replicas) when Sync returns, each line only right after
// the one its writer wrote before. Cost: a lease, and one round trip per
// line at each Sync. Errors: ErrConfig (a bad name or MaxAge);
// journal.ErrLocked when another coordinator holds the lease beyond
// WaitLock; ErrOldLayout; ErrNotProvisioned; ErrEngine (after trying
// again for a while when the engine's answers fail for a while).
func TaskDecisionStore(ctx context.Context, js jetstream.JetStream, queue, task string, cfg JournalConfig) (journal.Store, error) {
	if err := checkName("queue", queue); err != nil {
		return nil, err
	}
	if err := checkName("task", task); err != nil {
		return nil, err
	}
	if cfg.MaxAge < 0 || cfg.MaxAge > MaxRetention {
		return nil, fmt.Errorf("%w: journal MaxAge %s: use 0 (the default) or a positive duration up to %s", ErrConfig, cfg.MaxAge, MaxRetention)
	}
	ref := taskJournal(queue, task)
	s, err := retryPassing(ctx, 0, func(ctx context.Context) (*journalStore, error) {
		s, err := openStoreOnce(ctx, js, ref, cfg, false)
		if errors.Is(err, journal.ErrPath) {
			s, err = openStoreOnce(ctx, js, ref, cfg, true)
		}
		return s, err
	})
	if err != nil {
		return nil, err // not a nil *journalStore in a non-nil interface
	}
	return s, nil
}
