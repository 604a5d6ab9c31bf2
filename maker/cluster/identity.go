package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nats-io/nkeys"
)

// Worker identities: one nkey per worker, issued and revoked by the
// engine's operator (maker nats worker add NAME, revoke NAME). They live
// in the credentials folder's workers/ subfolder: NAME.nk is the worker's
// seed (copy it to that worker's machine only), NAME.pub the public key
// the server accepts for it, as a worker. Revoking removes both: the
// server refuses the key from then on, and a running maker nats closes
// the worker's connections within a second.

// WorkerSeedFile is the seed of the worker identity name in the
// credentials folder dir.
func WorkerSeedFile(dir, name string) string { return filepath.Join(dir, "workers", name+".nk") }

func workerPubFile(dir, name string) string { return filepath.Join(dir, "workers", name+".pub") }

// AddWorker issues the worker identity name (1 to 64 letters, digits, '-'
// or '_') in the credentials folder dir: a new nkey pair, its seed in
// workers/NAME.nk and its public key in workers/NAME.pub, both mode 0600
// in folders of mode 0700. It returns the seed's path. Errors wrap
// ErrConfig (a bad name, or one already issued: revoke it first) or
// ErrAuth.
func AddWorker(dir, name string) (string, error) {
	if err := checkName("worker", name); err != nil {
		return "", err
	}
	wdir := filepath.Join(dir, "workers")
	if err := os.MkdirAll(wdir, 0o700); err != nil {
		return "", fmt.Errorf("%w: workers folder: %w", ErrAuth, err)
	}
	if err := os.Chmod(wdir, 0o700); err != nil {
		return "", fmt.Errorf("%w: workers folder: %w", ErrAuth, err)
	}
	if _, err := os.Stat(workerPubFile(dir, name)); err == nil {
		return "", fmt.Errorf("%w: worker %q is already issued (maker nats worker revoke %s first)", ErrConfig, name, name)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("%w: generate the key of worker %s: %w", ErrAuth, name, err)
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	if err := writeSecret(WorkerSeedFile(dir, name), append(seed, '\n')); err != nil {
		return "", err
	}
	if err := writeSecret(workerPubFile(dir, name), []byte(pub+"\n")); err != nil {
		return "", err
	}
	return WorkerSeedFile(dir, name), nil
}

// RevokeWorker revokes the worker identity name: its files are removed,
// so the server refuses its key (a running embedded server once it
// reloads the folder: Server.SetRoles). Errors wrap ErrNotFound (no such
// worker) or ErrAuth.
func RevokeWorker(dir, name string) error {
	if err := checkName("worker", name); err != nil {
		return err
	}
	err := os.Remove(workerPubFile(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: no worker %q issued in %s (maker nats worker ls lists them)", ErrNotFound, name, dir)
	}
	if err != nil {
		return fmt.Errorf("%w: revoke worker %s: %w", ErrAuth, name, err)
	}
	if err := os.Remove(WorkerSeedFile(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: remove the seed of worker %s: %w", ErrAuth, name, err)
	}
	return nil
}

// IssuedWorkers returns the names of the worker identities issued in dir,
// sorted, and their public keys by name. Errors wrap ErrAuth.
func IssuedWorkers(dir string) ([]string, map[string]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "workers"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, map[string]string{}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: workers folder: %w", ErrAuth, err)
	}
	var names []string
	keys := map[string]string{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".pub")
		if !ok || e.IsDir() || checkName("worker", name) != nil {
			continue
		}
		pubs, err := readPubs(workerPubFile(dir, name))
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
