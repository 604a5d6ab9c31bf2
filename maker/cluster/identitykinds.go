package cluster

import "fmt"

// Identities is a kind of identity the operator issues in an engine's
// credentials folder, one nkey each: WorkerIdentities (a worker's) or
// RunIdentities (a run's coordinator, a tenant using its own run only,
// with a journal budget of its own).
type Identities struct {
	// Kind is "worker" or "run".
	Kind     string
	add      func(dir, name string) (string, error)
	revoke   func(dir, name string) error
	issued   func(dir string) ([]string, map[string]string, error)
	setBytes func(dir, name string, n int64) error
}

// WorkerIdentities are the worker identities (AddWorker, RevokeWorker,
// IssuedWorkers).
var WorkerIdentities = Identities{Kind: "worker", add: AddWorker, revoke: RevokeWorker, issued: IssuedWorkers}

// RunIdentities are the run keys (AddRunCoordinator,
// RevokeRunCoordinator, IssuedRunCoordinators), each with its journal
// budget (SetRunKeyBytes).
var RunIdentities = Identities{Kind: "run", add: AddRunCoordinator, revoke: RevokeRunCoordinator, issued: IssuedRunCoordinators, setBytes: SetRunKeyBytes}

// Budgeted reports whether an identity of the kind has a journal budget
// (Issue's budget).
func (k Identities) Budgeted() bool { return k.setBytes != nil }

// Issue issues the identity name in the folder dir and returns its
// seed's path. With a budget (above 0, for a Budgeted kind) it records
// it too; and for a name issued already it only sets the budget, applied
// at its run's next journal, keeping the key: the seed returned is then
// "". Errors are the kind's: ErrConfig (a bad name, one issued already,
// a budget under 1 KiB or given to a kind without one), ErrNotFound or
// ErrAuth.
func (k Identities) Issue(dir, name string, budget int64) (string, error) {
	if budget == 0 {
		return k.add(dir, name)
	}
	if !k.Budgeted() {
		return "", fmt.Errorf("%w: a %s identity has no journal budget", ErrConfig, k.Kind)
	}
	if _, keys, err := k.issued(dir); err == nil && keys[name] != "" {
		return "", k.setBytes(dir, name, budget)
	}
	seed, err := k.add(dir, name)
	if err == nil {
		err = k.setBytes(dir, name, budget)
	}
	return seed, err
}

// Revoke revokes the identity name: its files removed, so the server
// refuses its key. Errors wrap ErrNotFound or ErrAuth.
func (k Identities) Revoke(dir, name string) error { return k.revoke(dir, name) }

// Issued returns the names issued in dir, sorted, and their public keys
// by name. Errors wrap ErrAuth.
func (k Identities) Issued(dir string) ([]string, map[string]string, error) { return k.issued(dir) }
