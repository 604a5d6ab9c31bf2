package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nkeys"
)

// Issued identities: one nkey per worker, and one per run for a
// coordinator that may touch that run only, issued and revoked by the
// engine's operator (maker nats worker add NAME, maker nats run add RUN,
// and revoke). They live in the credentials folder's workers/ and runs/
// subfolders: NAME.nk is the seed (copy it to that machine only),
// NAME.pub the public key the server accepts, as a worker or as
// RunRole(NAME). Revoking removes both: the server refuses the key from
// then on, and a running maker nats closes its connections within a
// second.

// The subfolders of the credentials folder holding issued identities.
const (
	workersFolder = "workers"
	runsFolder    = "runs"
)

func seedIn(dir, folder, name string) string { return filepath.Join(dir, folder, name+".nk") }
func pubIn(dir, folder, name string) string  { return filepath.Join(dir, folder, name+".pub") }

// AddWorker issues the worker identity name (1 to 64 letters, digits, '-'
// or '_') in the credentials folder dir: a new nkey pair, its seed in
// workers/NAME.nk and its public key in workers/NAME.pub, both mode 0600
// in folders of mode 0700. It returns the seed's path. Errors wrap
// ErrConfig (a bad name, or one already issued: revoke it first) or
// ErrAuth.
func AddWorker(dir, name string) (string, error) {
	return addIdentity(dir, workersFolder, "worker", name)
}

// RevokeWorker revokes the worker identity name: its files are removed,
// so the server refuses its key (a running embedded server once it
// reloads the folder: Server.SetRoles). Errors wrap ErrNotFound (no such
// worker) or ErrAuth.
func RevokeWorker(dir, name string) error { return revokeIdentity(dir, workersFolder, "worker", name) }

// IssuedWorkers returns the names of the worker identities issued in dir,
// sorted, and their public keys by name. Errors wrap ErrAuth.
func IssuedWorkers(dir string) ([]string, map[string]string, error) {
	return issued(dir, workersFolder, "worker")
}

// AddRunCoordinator issues a coordinator identity for the run (or task
// queue) named run in the credentials folder dir: its seed in
// runs/RUN.nk, its public key in runs/RUN.pub (mode 0600, folders 0700).
// Its holder has the role RunRole(run): it draws samples as any
// coordinator does, and uses the journal, lease and task queue of run
// only (see Permissions). It returns the seed's path. Errors wrap
// ErrConfig (a bad name, or one already issued) or ErrAuth.
func AddRunCoordinator(dir, run string) (string, error) {
	return addIdentity(dir, runsFolder, "run", run)
}

// RevokeRunCoordinator revokes the coordinator identity of run, as
// RevokeWorker does a worker's, and forgets its journal budget
// (SetRunKeyBytes). Errors wrap ErrNotFound or ErrAuth.
func RevokeRunCoordinator(dir, run string) error {
	if err := revokeIdentity(dir, runsFolder, "run", run); err != nil {
		return err
	}
	if err := os.Remove(budgetIn(dir, run)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: remove the budget of run %s: %w", ErrAuth, run, err)
	}
	return nil
}

// budgetIn is the file of run's journal budget: runs/RUN.bytes.
func budgetIn(dir, run string) string { return filepath.Join(dir, runsFolder, run+".bytes") }

// SetRunKeyBytes records in the credentials folder dir the journal budget
// of the issued run key run (runs/RUN.bytes, a count of bytes): the
// MaxBytes of its journal stream (RunStream) on an engine reading dir
// (RunKeyBytesIn), applied at the run's next journal. n must be at least
// 1 KiB. Errors wrap ErrConfig (a bad name or size), ErrNotFound (no such
// run key issued) or ErrAuth (the file).
func SetRunKeyBytes(dir, run string, n int64) error {
	if err := checkName("run", run); err != nil {
		return err
	}
	if n < 1<<10 {
		return fmt.Errorf("%w: the journal budget of run %s, %d bytes: use at least 1024", ErrConfig, run, n)
	}
	if !isFile(pubIn(dir, runsFolder, run)) {
		return fmt.Errorf("%w: no run %q issued in %s (maker nats run add %s issues it)", ErrNotFound, run, dir, run)
	}
	return writeSecret(budgetIn(dir, run), []byte(strconv.FormatInt(n, 10)+"\n"))
}

// RunKeyBytesIn returns the journal budget of each run recorded in the
// credentials folder dir (SetRunKeyBytes), read at each call, for
// ProvisionConfig.RunKeyBytesOf: 0 for a run with none (or one that does
// not read as a size), meaning the engine's default.
func RunKeyBytesIn(dir string) func(run string) int64 {
	return func(run string) int64 {
		if checkName("run", run) != nil {
			return 0
		}
		b, err := os.ReadFile(budgetIn(dir, run))
		if err != nil {
			return 0
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
}

// IssuedRunCoordinators returns the runs with a coordinator identity
// issued in dir, sorted, and their public keys by run. Errors wrap
// ErrAuth.
func IssuedRunCoordinators(dir string) ([]string, map[string]string, error) {
	return issued(dir, runsFolder, "run")
}

func addIdentity(dir, folder, kind, name string) (string, error) {
	if err := checkName(kind, name); err != nil {
		return "", err
	}
	sub := filepath.Join(dir, folder)
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return "", fmt.Errorf("%w: %s folder: %w", ErrAuth, folder, err)
	}
	if err := os.Chmod(sub, 0o700); err != nil {
		return "", fmt.Errorf("%w: %s folder: %w", ErrAuth, folder, err)
	}
	if _, err := os.Stat(pubIn(dir, folder, name)); err == nil {
		return "", fmt.Errorf("%w: %s %q is already issued (maker nats %s revoke %s first)", ErrConfig, kind, name, kind, name)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("%w: generate the key of %s %s: %w", ErrAuth, kind, name, err)
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	if err := writeSecret(seedIn(dir, folder, name), append(seed, '\n')); err != nil {
		return "", err
	}
	if err := writeSecret(pubIn(dir, folder, name), []byte(pub+"\n")); err != nil {
		return "", err
	}
	return seedIn(dir, folder, name), nil
}

func revokeIdentity(dir, folder, kind, name string) error {
	if err := checkName(kind, name); err != nil {
		return err
	}
	err := os.Remove(pubIn(dir, folder, name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: no %s %q issued in %s (maker nats %s ls lists them)", ErrNotFound, kind, name, dir, kind)
	}
	if err != nil {
		return fmt.Errorf("%w: revoke %s %s: %w", ErrAuth, kind, name, err)
	}
	if err := os.Remove(seedIn(dir, folder, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: remove the seed of %s %s: %w", ErrAuth, kind, name, err)
	}
	return nil
}

func issued(dir, folder, kind string) ([]string, map[string]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, folder))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, map[string]string{}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s folder: %w", ErrAuth, folder, err)
	}
	var names []string
	keys := map[string]string{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".pub")
		if !ok || e.IsDir() || checkName(kind, name) != nil {
			continue
		}
		pubs, err := readPubs(pubIn(dir, folder, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // revoked meanwhile
		}
		if err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		keys[name] = pubs[0]
	}
	slices.Sort(names)
	return names, keys, nil
}

// ErrNoIdentity: a credentials folder holds no worker identity to sign in
// with (none issued, or not the one named).
var ErrNoIdentity = errors.New("no worker identity")

// WorkerSeedIn picks the seed a worker signs in with from the credentials
// folder dir. With name, it is workers/NAME.nk (maker nats worker add
// NAME), which must exist. Without, it is the only seed in workers/;
// several are refused (ErrConfig, naming them: choose one), and with none
// it is the shared worker.nk when there is one (a stock cluster's
// workerK folder, or an engine started with a shared worker key, which
// maker nats accepts only with --shared-worker). Nothing found wraps
// ErrNoIdentity, naming maker nats worker add NAME. It reads the folder
// only: whether the server accepts the key is the server's business.
func WorkerSeedIn(dir, name string) (string, error) {
	if name != "" {
		if err := checkName("worker", name); err != nil {
			return "", err
		}
		seed := seedIn(dir, workersFolder, name)
		if !isFile(seed) {
			return "", fmt.Errorf("%w %q in %s (no %s): issue it on the engine with maker nats worker add %s and copy its seed here", ErrNoIdentity, name, dir, seed, name)
		}
		return seed, nil
	}
	entries, err := os.ReadDir(filepath.Join(dir, workersFolder))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s folder: %w", ErrAuth, workersFolder, err)
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".nk"); ok && e.Type().IsRegular() && checkName("worker", n) == nil {
			names = append(names, n)
		}
	}
	switch {
	case len(names) == 1:
		return seedIn(dir, workersFolder, names[0]), nil
	case len(names) > 1:
		slices.Sort(names)
		return "", fmt.Errorf("%w: %s holds %d worker identities (%s): choose one by its name", ErrConfig, filepath.Join(dir, workersFolder), len(names), strings.Join(names, ", "))
	case isFile(SeedFile(dir, RoleWorker)):
		return SeedFile(dir, RoleWorker), nil
	}
	return "", fmt.Errorf("%w in %s: issue one on the engine with maker nats worker add NAME, and give its seed (workers/NAME.nk)", ErrNoIdentity, dir)
}

// isFile reports whether path names a regular file.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// CheckWorkerName reports whether name may name a worker identity: 1 to
// 64 letters, digits, '-' or '_'. Errors wrap ErrConfig.
func CheckWorkerName(name string) error { return checkName("worker", name) }
