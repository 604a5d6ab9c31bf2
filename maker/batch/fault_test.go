package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// diskStore is an in-memory journal.Store on a shared "disk" that
// can fill up: an Append past the room fails with err (ENOSPC, EIO).
type diskStore struct {
	d     *disk
	name  string
	lines [][]byte
}

type disk struct {
	mu   sync.Mutex
	room int // lines that still fit; negative: no limit
	err  error
}

func (s *diskStore) Name() string { return s.name }
func (s *diskStore) Lines(from int, fn func(int, []byte) error) error {
	for i := from; i < len(s.lines); i++ {
		if err := fn(i, s.lines[i]); err != nil {
			return err
		}
	}
	return nil
}
func (s *diskStore) Torn() []byte { return nil }
func (s *diskStore) Append(line []byte) error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.d.room == 0 {
		return fmt.Errorf("write %s: %w", s.name, s.d.err)
	}
	if s.d.room > 0 {
		s.d.room--
	}
	s.lines = append(s.lines, line)
	return nil
}
func (s *diskStore) Flush() error { return nil }
func (s *diskStore) Sync() error  { return nil }
func (s *diskStore) Reset() error { s.lines = nil; return nil }
func (s *diskStore) Close() error { return nil }

// memResults keeps results by job key.
type memResults struct {
	mu sync.Mutex
	m  map[string]Result
}

func (r *memResults) Write(res Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[res.Key()] = res
	return nil
}

func (r *memResults) done(j Job) (Result, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.m[j.Key()]
	return res, ok
}

// sameWork drops what differs between runs of the same work.
func sameWork(r Result) Result {
	r.WallSeconds, r.Journal, r.Resumed = 0, "", 0
	return r
}

// TestFaultNeverFailsATask: a disk that fills up (ENOSPC, EDQUOT), or
// fails (EIO), while a batch runs stops the batch with ErrFault naming
// the cause and records no result for the stopped tasks (never
// "failed"); running the same batch again once there is room finishes
// every task with the result of an uninterrupted batch.
func TestFaultNeverFailsATask(t *testing.T) {
	jobs := readJobs(t, `{"id": "a", "hanoi": {"disks": 5}, "seed": 1}
{"id": "b", "hanoi": {"disks": 6}, "seed": 2}
{"id": "c", "hanoi": {"disks": 4}, "seed": 3}
{"id": "d", "hanoi": {"disks": 5}, "seed": 4}`)
	run := func(d *disk, stores map[string]*diskStore, res *memResults, conc int) (Summary, error) {
		var mu sync.Mutex
		return (&Runner{Build: simBuiltin(nil).Build, Concurrency: conc, Results: res, Done: res.done,
			Journal: func(j Job) (*journal.Journal, error) {
				mu.Lock()
				s, ok := stores[j.Key()]
				if !ok {
					s = &diskStore{d: d, name: j.Key()}
					stores[j.Key()] = s
				}
				mu.Unlock()
				return journal.New(s)
			}}).Run(context.Background(), jobs)
	}
	whole := &memResults{m: map[string]Result{}}
	_, err := run(&disk{room: -1}, map[string]*diskStore{}, whole, 2)
	require.NoError(t, err)
	require.Len(t, whole.m, 4)

	for _, c := range []struct {
		errno error
		room  int
		conc  int
	}{{syscall.ENOSPC, 40, 1}, {syscall.EDQUOT, 70, 2}, {syscall.EIO, 1, 2}, {syscall.ENOSPC, 0, 1}} {
		name := fmt.Sprintf("%v after %d lines", c.errno, c.room)
		d := &disk{room: c.room, err: c.errno}
		stores := map[string]*diskStore{}
		res := &memResults{m: map[string]Result{}}
		sum, err := run(d, stores, res, c.conc)
		require.ErrorIs(t, err, ErrFault, name)
		require.ErrorIs(t, err, c.errno, name)
		assert.Regexp(t, `^line \d \(id "[a-d]"\): `, err.Error(), "%s: the task is named", name)
		for k, r := range res.m {
			assert.NotEqual(t, StatusFailed, r.Status, "%s: %s recorded failed", name, k)
			assert.Equal(t, StatusSolved, r.Status, "%s: %s", name, k)
		}
		assert.Positive(t, sum.Unfinished, name)
		assert.Zero(t, sum.Failed, name)

		d.mu.Lock()
		d.room = -1 // room made
		d.mu.Unlock()
		sum, err = run(d, stores, res, c.conc)
		require.NoError(t, err, name)
		assert.Zero(t, sum.Unfinished, name)
		require.Len(t, res.m, 4, name)
		for k, w := range whole.m {
			assert.Equal(t, sameWork(w), sameWork(res.m[k]), "%s: %s as uninterrupted", name, k)
		}
	}
}

// TestIsFault: what a resume fixes is a fault; what a task did is not.
func TestIsFault(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("%w: step 3 could not be journaled (write x: %w)", maker.ErrStep, syscall.ENOSPC),
		fmt.Errorf("x: %w", syscall.EDQUOT), fmt.Errorf("x: %w", syscall.EIO), fmt.Errorf("x: %w", syscall.EFBIG),
		fmt.Errorf("x: %w", syscall.EROFS), journal.ErrLocked, journal.ErrKey,
		fmt.Errorf("step 2: %w", vote.ErrTooManyErrors), fmt.Errorf("404: %w", maker.ErrPermanent),
	} {
		assert.True(t, IsFault(err), "%v", err)
	}
	for _, err := range []error{nil, maker.ErrStepLimit, journal.ErrCorrupt, journal.ErrMismatch, maker.ErrTaskPanic, errors.New("the task said no")} {
		assert.False(t, IsFault(err), "%v", err)
	}
	r := &Runner{Fault: func(err error) bool { return errors.Is(err, errEngineForTest) }}
	assert.True(t, r.fault(fmt.Errorf("x: %w", errEngineForTest)))
	assert.False(t, r.fault(nil))
}

var errEngineForTest = errors.New("engine down")

// A job whose journal cannot be opened because the run was stopped (its
// context ended while the journal's lease was being taken) has no
// result: it is unfinished, for the next run, never "failed". Over NATS
// a batch stopped at its --max-cost recorded a task "failed: context
// canceled" for good, and the rerun with a larger cap never ran it.
func TestStoppedWhileOpeningItsJournalIsUnfinished(t *testing.T) {
	jobs := readJobs(t, `{"id": "a", "hanoi": {"disks": 3}, "seed": 1}`)
	ctx, cancel := context.WithCancel(context.Background())
	res := &memResults{m: map[string]Result{}}
	sum, err := (&Runner{Build: simBuiltin(nil).Build, Results: res, Done: res.done,
		Journal: func(Job) (*journal.Journal, error) {
			cancel() // the run stops while the journal is opened
			return nil, fmt.Errorf("take the lease of the journal: %w", ctx.Err())
		}}).Run(ctx, jobs)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, res.m, "no result for a job the stop interrupted")
	assert.Equal(t, 1, sum.Unfinished)
	assert.Zero(t, sum.Failed)
}
