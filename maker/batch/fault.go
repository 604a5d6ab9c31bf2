package batch

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
)

// ErrFault wraps the error of a task stopped by a fault outside the task,
// one that running the same batch again fixes once the fault is gone: a
// full disk, an I/O error, an outage of the provider or the engine. The
// task gets no result (it is never recorded failed: its journal keeps its
// steps), and the batch stops: the tasks still running are cancelled and
// resume from their journals too.
var ErrFault = errors.New("stopped by a fault outside the task")

// faultErr wraps a task's fault with its place and what to do.
func faultErr(job Job, err error) error {
	return fmt.Errorf("%s: %w (%w: no result is recorded; fix it, then run the same command again: unfinished tasks resume from their journals)", job.Where(), err, ErrFault)
}

// faultErrnos are the system errors that resuming fixes once there is
// room again, the device works again, or the file system is writable.
var faultErrnos = []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG, syscall.EIO, syscall.EROFS}

// IsFault reports whether err stops a task for a fault outside it, which
// resuming fixes, rather than ending it: a full disk or quota (ENOSPC,
// EDQUOT, EFBIG, a file-size limit), an I/O error (EIO), a read-only file
// system (EROFS), a journal held by another run (journal.ErrLocked)
// or opened with the wrong key (journal.ErrKey), a provider that
// failed every draw of a step (vote.ErrTooManyErrors: down, unreachable,
// rate limited beyond the retries) or refused for good
// (maker.ErrPermanent: a key, URL or model name to fix), or a cancelled
// draw. Runner.Fault adds more (the engine's errors, with NATS).
func IsFault(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range faultErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return errors.Is(err, journal.ErrLocked) || errors.Is(err, journal.ErrKey) ||
		errors.Is(err, vote.ErrTooManyErrors) || errors.Is(err, maker.ErrPermanent)
}

// fault reports whether err is a fault by IsFault or r.Fault.
func (r *Runner) fault(err error) bool {
	return IsFault(err) || (r.Fault != nil && err != nil && r.Fault(err))
}
