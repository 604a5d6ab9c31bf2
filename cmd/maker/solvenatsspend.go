package main

import (
	"context"
	"sync"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/budget"
)

// natsBook makes --max-cost of maker solve --nats the batch's budget
// across runs, as batch.Runner's is for a local batch: cluster.SolveBatch
// runs each task as a batch of one without the Runner's Budget, so the
// coordinator keeps the spend file (Store.SpendPath) itself. At the start
// it credits the budget every task solver shares (batch.Builtin.Budget)
// with what earlier runs spent: the spend file's total, at least the cost
// of the results recorded so far. Of that, what is not in a recorded
// result (the steps of unfinished tasks, journaled on the engine) is
// credited ahead (budget.Budget.CreditAhead), since a task resumed here
// credits its journaled steps again. It saves the spend file after each
// task solved here and at the end.
//
// Over several coordinators at once each holds its own budget: the cap
// bounds each coordinator's spend, and the spend files of the next run
// count every result recorded.
type natsBook struct {
	budget *budget.Budget
	store  *batch.Store
	prior  float64 // what earlier runs spent

	mu  sync.Mutex
	err error // the first failed save
}

// openNATSBook credits budget with what earlier runs of jobs spent.
func openNATSBook(budget *budget.Budget, store *batch.Store, jobs []batch.Job) *natsBook {
	recorded := recordedCost(store, jobs)
	b := &natsBook{budget: budget, store: store, prior: max(store.Spend().Spent, recorded)}
	budget.Credit(recorded)
	budget.CreditAhead(b.prior - recorded)
	return b
}

// recordedCost is the cost of the results store holds for jobs.
func recordedCost(store *batch.Store, jobs []batch.Job) float64 {
	c := 0.0
	for _, job := range jobs {
		if res, ok := store.Done(job); ok {
			c += res.Cost
		}
	}
	return c
}

// spent returns what this run spent and what every run of the batch did.
func (b *natsBook) spent() (now, all float64) {
	now = b.budget.Settled()
	return now, b.prior + now
}

// save writes the spend file: every run's spend, at least the cost of the
// results recorded (other coordinators' included, once written here).
func (b *natsBook) save(jobs []batch.Job) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, all := b.spent()
	if jobs != nil {
		all = max(all, recordedCost(b.store, jobs))
	}
	err := b.store.SaveSpend(batch.Spend{Spent: all})
	if err != nil && b.err == nil {
		b.err = err
	}
	return err
}

// wrap returns build with the spend file saved once each task's unit is
// closed (the task ended here, with a result or not).
func (b *natsBook) wrap(build batch.Builder) batch.Builder {
	return func(ctx context.Context, job batch.Job) (*batch.Unit, error) {
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

// finish saves the spend file at the end of the run and sets the summary's
// spend; a save that failed (now or after a task) is the run's error when
// it has none.
func (b *natsBook) finish(sum *batch.Summary, jobs []batch.Job, runErr error) error {
	_ = b.save(jobs)
	sum.Spent, sum.SpentTotal = b.spent()
	sum.SpentTotal = max(sum.SpentTotal, recordedCost(b.store, jobs))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil && runErr == nil {
		return failed(b.err)
	}
	return runErr
}
