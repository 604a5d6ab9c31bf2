package cluster

import (
	"fmt"
	"slices"
)

// Note says how the clients of an engine with these credentials sign in,
// as maker nats prints it at start: which keys the folder holds for whom
// (made now when made is not empty, else kept), the shared keys it does
// not accept (Unaccepted), and where clients give their seed. With no
// Dir (a server with a token, no roles) it is the warning that every
// holder of the token may do anything.
func (c EngineCreds) Note(made []Role) string {
	if c.Dir == "" {
		return fmt.Sprintf("warning: --auth token: every holder of $%s may do anything, answer jobs and rewrite journals included; the default --auth roles separates workers from coordinators", TokenEnv)
	}
	state := "kept"
	if len(made) > 0 {
		state = "generated now"
	}
	unaccepted := c.Unaccepted()
	coord := "coordinators: the key of their run (maker nats run add RUN: runs/RUN.nk)"
	if c.SharedCoordinator {
		coord = "coordinator.nk for coordinators of every run (--shared-coordinator: any holder may touch every run; prefer maker nats run add RUN)"
	} else if slices.Contains(unaccepted, RoleCoordinator) {
		coord += "; coordinator.pub is NOT accepted (--shared-coordinator accepts it)"
	}
	worker := "workers: an identity each (maker nats worker add NAME: workers/NAME.nk)"
	if c.SharedWorker {
		worker = "worker.nk for every worker (--shared-worker: any holder acts as every worker; prefer maker nats worker add NAME)"
	} else if slices.Contains(unaccepted, RoleWorker) {
		worker += "; worker.pub is NOT accepted (--shared-worker accepts it)"
	}
	return fmt.Sprintf("credentials in %s (%s): %s; %s; admin.nk for maker nats ls and rm; on their machines: --nats-creds SEED (or export %s=SEED)", c.Dir, state, coord, worker, CredsEnv)
}
