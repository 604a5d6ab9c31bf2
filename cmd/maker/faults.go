package main

import (
	"errors"

	"github.com/mdap-go/mdap/maker/cluster"
)

// engineFault reports the engine's errors (an outage, a lost journal
// lease, a closed connection) as faults outside a batch's task: the task
// gets no result and the same command resumes it (batch.Runner.Fault).
func engineFault(err error) bool {
	return errors.Is(err, cluster.ErrEngine) || errors.Is(err, cluster.ErrLeaseLost) || errors.Is(err, cluster.ErrClosed)
}
