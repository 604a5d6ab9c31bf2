package cluster

import (
	"context"
	"sync"
	"time"
)

// EngineCreds are the settings of an engine's credentials folder, the
// folder a server with roles (ServerConfig.Roles) takes its keys from:
// the admin's key always, the shared keys only when asked, and the
// issued identities (AddWorker, AddRunCoordinator) whatever the settings.
type EngineCreds struct {
	// Dir is the credentials folder; required (maker nats: STORE/creds).
	Dir string
	// SharedCoordinator also makes and accepts coordinator.nk, one
	// coordinator key for every run: any holder may touch every run's
	// journal, lease and task queue.
	SharedCoordinator bool
	// SharedWorker also makes and accepts worker.nk, one key for every
	// worker: any holder acts as every worker.
	SharedWorker bool
}

// Roles are the roles whose keys the engine makes and accepts: the admin,
// and the shared coordinator and worker when asked.
func (c EngineCreds) Roles() []Role {
	roles := []Role{RoleAdmin}
	if c.SharedCoordinator {
		roles = append(roles, RoleCoordinator)
	}
	if c.SharedWorker {
		roles = append(roles, RoleWorker)
	}
	return roles
}

// Ensure reads the folder's keys, making the missing keys of Roles
// (EnsureCredentials): the keys the server accepts, and the roles whose
// keys it made now. Errors wrap ErrAuth.
func (c EngineCreds) Ensure() (RoleKeys, []Role, error) {
	return EnsureCredentials(c.Dir, c.Roles()...)
}

// Unaccepted are the shared roles (RoleCoordinator, RoleWorker) whose
// ROLE.pub is in the folder though the settings do not accept it: a
// holder of its seed is refused, which its operator may not expect.
func (c EngineCreds) Unaccepted() []Role {
	var out []Role
	for _, r := range []struct {
		role   Role
		shared bool
	}{{RoleCoordinator, c.SharedCoordinator}, {RoleWorker, c.SharedWorker}} {
		if !r.shared && isFile(PubFile(c.Dir, r.role)) {
			out = append(out, r.role)
		}
	}
	return out
}

// Watch reads the folder again every every (at least once a
// millisecond's worth) until ctx ends and gives srv the keys found, so
// that an identity issued is let in and one revoked is cut off at once
// (Server.SetRoles). report, if set, hears of each reading that failed
// (err: the keys in force are kept) and of each that closed connections
// (closed > 0, signed in with a key now gone); it is called from the
// watching goroutine. Watch returns at once, with a function that waits
// for the watch, which ends with ctx.
func (c EngineCreds) Watch(ctx context.Context, srv *Server, every time.Duration, report func(closed int, err error)) (wait func()) {
	if report == nil {
		report = func(int, error) {}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(every, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			keys, _, err := c.Ensure()
			if err != nil {
				report(0, err)
				continue
			}
			if n, err := srv.SetRoles(keys); err == nil && n > 0 {
				report(n, nil)
			}
		}
	})
	return wg.Wait
}
