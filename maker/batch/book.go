package batch

import (
	"context"
	"sync"

	"github.com/mdap-go/mdap/maker/budget"
)

// Book makes a budget the batch's across runs, as Runner.Budget is, where
// no Runner holds it: when each task runs as a batch of one (maker solve
// --nats: cluster.SolveBatch), the coordinator keeps the spend file
// (Store.SpendPath) itself. OpenBook credits the budget every task
// solver shares (Builtin.Budget) with what earlier runs spent: the spend
// file's total, at least the cost of the results recorded so far. Of
// that, what is not in a recorded result (the steps of unfinished tasks, journaled on the engine) is
// credited ahead (budget.Budget.CreditAhead), since a task resumed here
// credits its journaled steps again. It saves the spend file after each
// task solved here (Wrap) and at the end (Finish). Its methods are safe
// for concurrent use.
//
// Over several coordinators at once each holds its own budget: the cap
// bounds each coordinator's spend, and the spend files of the next run
// count every result recorded.
type Book struct {
	budget *budget.Budget
	store  *Store
	prior  float64 // what earlier runs spent

	mu  sync.Mutex
	err error // the first failed save
}

// OpenBook credits spend with what earlier runs of jobs spent, by
// store's spend file and results.
func OpenBook(spend *budget.Budget, store *Store, jobs []Job) *Book {
	recorded := recordedCost(store, jobs)
	b := &Book{budget: spend, store: store, prior: max(store.Spend().Spent, recorded)}
	spend.Credit(recorded)
	spend.CreditAhead(b.prior - recorded)
	return b
}

// recordedCost is the cost of the results store holds for jobs.
func recordedCost(store *Store, jobs []Job) float64 {
	c := 0.0
	for _, job := range jobs {
		if res, ok := store.Done(job); ok {
			c += res.Cost
		}
	}
	return c
}

// spent returns what this run spent and what every run of the batch did.
func (b *Book) spent() (now, all float64) {
	now = b.budget.Settled()
	return now, b.prior + now
}

// save writes the spend file: every run's spend, at least the cost of the
// results recorded (other coordinators' included, once written here).
func (b *Book) save(jobs []Job) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, all := b.spent()
	if jobs != nil {
		all = max(all, recordedCost(b.store, jobs))
	}
	err := b.store.SaveSpend(Spend{Spent: all})
	if err != nil && b.err == nil {
		b.err = err
	}
	return err
}

// Wrap returns build with the spend file saved once each task's unit is
// closed (the task ended here, with a result or not).
func (b *Book) Wrap(build Builder) Builder {
	return func(ctx context.Context, job Job) (*Unit, error) {
		u, err := build(ctx, job)
		if err != nil || u == nil {
			return u, err
		}
		w := *u
		w.Close = func() error {
			var err error
			if u.Close != nil {
				err = u.Close()
			}
			_ = b.save(nil) // a failure is reported at the end
			return err
		}
		return &w, nil
	}
}

// Finish saves the spend file at the end of the run and sets the
// summary's Spent and SpentTotal; a save that failed (now or after a
// task) is the run's error when it has none: it returns runErr, or that
// save's error.
func (b *Book) Finish(sum *Summary, jobs []Job, runErr error) error {
	_ = b.save(jobs)
	sum.Spent, sum.SpentTotal = b.spent()
	sum.SpentTotal = max(sum.SpentTotal, recordedCost(b.store, jobs))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil && runErr == nil {
		return b.err
	}
	return runErr
}
