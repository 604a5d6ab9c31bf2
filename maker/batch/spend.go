package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"sync"

	"github.com/mdap-go/mdap/maker/budget"
)

// ErrSpendCorrupt: the batch's spend file does not parse. The file is left
// as it is.
var ErrSpendCorrupt = errors.New("spend file is corrupt")

// spendSuffix names a results file's spend file: RESULTS.jsonl.spend.json.
const spendSuffix = ".spend.json"

// Spend is what a batch has spent over every run so far, kept in its spend
// file beside the results file (Store.SpendPath: RESULTS.jsonl.spend.json) so that a spending cap
// (Runner.Budget) holds for the whole batch across runs.
type Spend struct {
	// Spent is the dollars every model call of every run cost, as far as
	// the file was written: after every result and when a run ends. A
	// run killed at once (SIGKILL, a power loss) loses from it what it
	// spent since its last write; what it journaled still counts (see
	// Journaled).
	Spent float64 `json:"spent"`
	// Journaled is, for each job without a result (by Job.Key), the part
	// of Spent its journal holds: resuming the job credits the budget
	// with it again (maker.Solver.Budget), so a run takes it off what it
	// credits from Spent.
	Journaled map[string]float64 `json:"journaled,omitempty"`
}

// SpendPath returns the spend file's path: the results file's with
// ".spend.json" added.
func (s *Store) SpendPath() string { return s.path + spendSuffix }

// Spend returns the spend file as OpenStore read it: zero when the results
// file or the spend file did not exist.
func (s *Store) Spend() Spend {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.spend
	sp.Journaled = maps.Clone(sp.Journaled)
	return sp
}

// SaveSpend replaces the spend file with sp, whole: it writes a new file,
// syncs it and renames it over the old one, so the file is the old one or
// the new one whatever kills the process. Errors are the file system's.
func (s *Store) SaveSpend(sp Spend) error {
	b, err := json.Marshal(sp)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tmp := s.SpendPath() + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("spend file: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, s.SpendPath())
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("spend file %s: %w", s.SpendPath(), werr)
	}
	s.spend = sp
	return nil
}

// readSpend reads the spend file, if there is one; called by OpenStore
// with the results file locked.
func (s *Store) readSpend() error {
	b, err := os.ReadFile(s.SpendPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStorePath, err)
	}
	var sp Spend
	if err := json.Unmarshal(b, &sp); err != nil || !(sp.Spent >= 0) {
		return fmt.Errorf("%w: %s does not hold what the batch spent (%v); restore it, or remove it to count only the spend of the results and journals", ErrSpendCorrupt, s.SpendPath(), err)
	}
	s.spend = sp
	return nil
}

// spendBook keeps a run's spend file up to date: what earlier runs spent,
// what this run's budget settled, and the journaled spend of the jobs
// without a result.
type spendBook struct {
	budget *budget.Budget
	save   func(Spend) error // nil without a Store

	mu        sync.Mutex
	prior     float64            // what earlier runs spent
	journaled map[string]float64 // by Job.Key, jobs without a result
}

// openBook credits budget with what earlier runs of the batch spent: the
// spend file's total (at least the recorded results' cost), all of it at
// once; what the journals of the jobs to run hold is credited ahead
// (budget.Budget.CreditAhead), since each job credits it again when it
// resumes. recorded is the cost of the results recorded before this run.
func (r *Runner) openBook(jobs []Job, pending []int, recorded float64) *spendBook {
	b := &spendBook{budget: r.Budget, journaled: map[string]float64{}}
	var sp Spend
	if r.Store != nil {
		sp = r.Store.Spend()
		b.save = r.Store.SaveSpend
	}
	b.prior = max(sp.Spent, recorded)
	ahead := 0.0
	for _, i := range pending {
		key := jobs[i].Key()
		j, ok := sp.Journaled[key]
		if !ok {
			continue
		}
		// Counted again only if the journal is still there to resume.
		if p := r.Store.JournalPath(jobs[i]); p != "" {
			if _, err := os.Stat(p); err == nil {
				b.journaled[key] = j
				ahead += j
			}
		}
	}
	ahead = min(ahead, b.prior)
	b.budget.Credit(b.prior - ahead)
	b.budget.CreditAhead(ahead)
	return b
}

// stepped records that job key's journal now holds dollars of spend.
func (b *spendBook) stepped(key string, dollars float64) {
	b.mu.Lock()
	b.journaled[key] = dollars
	b.mu.Unlock()
}

// finished records that job key has its result: its spend is in Spent.
func (b *spendBook) finished(key string) {
	b.mu.Lock()
	delete(b.journaled, key)
	b.mu.Unlock()
}

// spent returns what this run and every run so far spent.
func (b *spendBook) spent() (now, all float64) {
	now = b.budget.Settled()
	return now, b.prior + now
}

// writeErr saves the spend file; an error wraps ErrWrite, and stops the
// batch as a result that could not be recorded does.
func (b *spendBook) writeErr() error {
	if err := b.write(); err != nil {
		return fmt.Errorf("%w: what the batch spent: %w", ErrWrite, err)
	}
	return nil
}

// write saves the spend file.
func (b *spendBook) write() error {
	if b.save == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, all := b.spent()
	return b.save(Spend{Spent: all, Journaled: maps.Clone(b.journaled)})
}
