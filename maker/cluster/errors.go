package cluster

import (
	"errors"
	"fmt"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// Errors of this package, for errors.Is. Journal errors also wrap the
// maker package's journal sentinels (journal.ErrLocked,
// journal.ErrExists, journal.ErrPath), so code written for file
// journals handles them unchanged.
var (
	// ErrConfig: a configuration was refused: an empty route, a bad run,
	// queue or task name, a negative count. The message names the field.
	ErrConfig = fielderr.ErrConfig

	// ErrEngine: a JetStream operation failed (a stream or consumer could
	// not be created, a publish was not acknowledged, the connection is
	// closed). It wraps the nats error.
	ErrEngine = errors.New("NATS JetStream operation failed")

	// ErrClosed: the Drawer, Worker or journal was closed.
	ErrClosed = errors.New("closed")

	// ErrNoReply: no worker answered a sample within the Drawer's Timeout:
	// no worker serves the route, all of them are busy or gone, or the
	// engine lost the job. The job is withdrawn. To the solver it is a
	// failed sample, counted against the vote's error budget.
	ErrNoReply = errors.New("no worker replied in time")

	// ErrNoWorker: no worker serves the sample's route (see
	// DrawerConfig.NoWorker); it wraps ErrNoReply. The job is withdrawn.
	ErrNoWorker = fmt.Errorf("%w: no worker serves the route", ErrNoReply)

	// ErrNoJetStream: the server has no JetStream (a nats-server started
	// without -js); it wraps ErrEngine.
	ErrNoJetStream = fmt.Errorf("%w: the server has no JetStream", ErrEngine)

	// ErrRemote: the worker's model failed the call. It wraps the remote
	// error as an *llms.Error when the worker's error had a code (a rate
	// limit, say), so llms.IsRateLimitError and maker.RetryAfter see it.
	ErrRemote = errors.New("the worker's model failed")

	// ErrUndecodable: a job or reply on the engine did not decode. A bad
	// job is terminated (never redelivered); a bad reply is dropped, but
	// one bearing its job's lease fails the job's samples at once with
	// this error, naming the worker (DrawerStats.Bad), as does the
	// engine's stand-in for a job its worker acknowledged with no reply
	// stored.
	ErrUndecodable = errors.New("undecodable message")

	// ErrLeaseLost: a journal's lease expired (the engine did not answer
	// for a whole lease TTL) or another coordinator took the run over; the
	// message says which. This journal refuses to write (its appends are
	// fenced by the stream's expected last sequence in any case).
	ErrLeaseLost = errors.New("journal lease lost")

	// ErrLeaseTaken: another coordinator wrote the journal; it wraps
	// ErrLeaseLost.
	ErrLeaseTaken = fmt.Errorf("%w to another coordinator", ErrLeaseLost)

	// ErrAlreadyCompleted: a task of a TaskQueue already has a result; the
	// first result stands.
	ErrAlreadyCompleted = errors.New("task already completed")
)

// IsFault reports whether err is a fault of the engine rather than of a
// task (an outage, ErrEngine; a lost journal lease, ErrLeaseLost; a
// closed connection, ErrClosed): a batch gives such a task no result, and
// the same command resumes it (batch.Runner.Fault).
func IsFault(err error) bool {
	return errors.Is(err, ErrEngine) || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrClosed)
}
