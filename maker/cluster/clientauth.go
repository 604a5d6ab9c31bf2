package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
)

// Where a client finds what it signs in with, when its caller names
// nothing: the environment, then the default folder (what maker nats
// writes with its default --store).
const (
	// CredsEnv names the environment variable holding a client's
	// credential: a seed file, or a credentials folder (ROLE.nk,
	// workers/NAME.nk, runs/RUN.nk).
	CredsEnv = "MDAP_NATS_CREDS"
	// TokenEnv names the environment variable holding the token a
	// server without roles requires (ServerConfig.Token) and its
	// clients send.
	TokenEnv = "MDAP_NATS_TOKEN"
	// DefaultCredsDir is the credentials folder of an engine kept in
	// ./mdap-nats, relative to the working folder.
	DefaultCredsDir = "mdap-nats/creds"
)

// ErrNoRunKey: a credentials folder holds no coordinator key for a run.
var ErrNoRunKey = errors.New("no coordinator key")

// CoordinatorSeedIn picks the seed a coordinator of run signs in with from
// the credentials folder dir: the run's own key, runs/RUN.nk (maker nats
// run add RUN), when run is given and it exists; else the shared
// coordinator.nk when it exists (which a server with roles accepts only
// when its ServerConfig.Roles holds RoleCoordinator: maker nats
// --shared-coordinator). Nothing found wraps ErrNoRunKey. It reads the
// folder only: whether the server accepts the key is the server's
// business.
func CoordinatorSeedIn(dir, run string) (string, error) {
	if run != "" && CheckRunName(run) == nil {
		if seed := seedIn(dir, runsFolder, run); isFile(seed) {
			return seed, nil
		}
	}
	if shared := SeedFile(dir, RoleCoordinator); isFile(shared) {
		return shared, nil
	}
	return "", fmt.Errorf("%w in %s: neither %s nor the shared %s", ErrNoRunKey, dir, filepath.Join(runsFolder, cmpRun(run)+".nk"), filepath.Base(SeedFile("", RoleCoordinator)))
}

func cmpRun(run string) string {
	if run == "" {
		return "RUN"
	}
	return run
}

// ConnectHint says what to do about err, a failed Connect signed in as
// how (a text ending in the seed file's path, or naming the token): for a
// credential the server refused, which one to give instead (a shared
// coordinator.nk or worker.nk that maker nats accepts only when asked, or
// the credential maker nats printed); for a server nobody answered, to
// start one.
func ConnectHint(err error, how string) string {
	refused := errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || strings.Contains(strings.ToLower(err.Error()), "authorization")
	if refused && strings.HasSuffix(how, string(filepath.Separator)+"coordinator.nk") {
		return fmt.Sprintf("the server refused %s: maker nats accepts the shared coordinator key only when started with --shared-coordinator; give this run a key of its own with maker nats run add RUN (then --journal nats:RUN, or --queue RUN to maker solve)", how)
	}
	if refused && strings.HasSuffix(how, string(filepath.Separator)+"worker.nk") {
		return fmt.Sprintf("the server refused %s: maker nats accepts the shared worker key only when started with --shared-worker; give this worker an identity of its own with maker nats worker add NAME (then --nats-creds NAME.nk, or --identity NAME with the folder)", how)
	}
	if refused {
		return fmt.Sprintf("the server refused %s: give the credential maker nats printed with --nats-creds or $%s (its folder STORE/creds), or for a server with a token set $%s to that token", how, CredsEnv, TokenEnv)
	}
	return "start one with: maker nats"
}

// ClientCreds are what a client signs in with, as its user gives them: a
// seed file, or a credentials folder and the names that pick a seed in
// it.
type ClientCreds struct {
	// Path is a seed file or a credentials folder; empty means the one
	// $MDAP_NATS_CREDS (CredsEnv) names, else DefaultCredsDir when that
	// folder exists. Its flag's help names CredsEnv, DefaultCredsDir and
	// TokenEnv (TestCredsFlagNamesTheEnvironment keeps it in step).
	Path string `flag:"nats-creds" usage:"the credential to sign in to --nats with: a seed file, or the folder maker nats printed (default $MDAP_NATS_CREDS, else ./mdap-nats/creds if it exists; $MDAP_NATS_TOKEN for a server with a token)"`
	// Run is a coordinator's run: its key runs/RUN.nk in a folder.
	Run string
	// Identity is a worker's identity: workers/NAME.nk in a folder.
	Identity string
	// PathName is how SignIn's errors name Path ("--nats-creds");
	// empty is "Path".
	PathName string
}

// Resolve returns the credential Path names, else the environment's,
// else the default folder; and which of them named it: "Path", "$" +
// CredsEnv or DefaultCredsDir. Both are empty when none does (a client
// without a key: a server with a token, or none).
func (c ClientCreds) Resolve() (path, from string) {
	if c.Path != "" {
		return c.Path, "Path"
	}
	if env := os.Getenv(CredsEnv); env != "" {
		return env, "$" + CredsEnv
	}
	if st, err := os.Stat(DefaultCredsDir); err == nil && st.IsDir() {
		return DefaultCredsDir, DefaultCredsDir
	}
	return "", ""
}

// SeedIn picks the seed role signs in with from the credentials folder
// dir: a worker's identity (WorkerSeedIn by Identity), a coordinator's run
// key (CoordinatorSeedIn by Run), else ROLE.nk. Errors are theirs.
func (c ClientCreds) SeedIn(dir string, role Role) (string, error) {
	switch role {
	case RoleWorker:
		return WorkerSeedIn(dir, c.Identity)
	case RoleCoordinator:
		return CoordinatorSeedIn(dir, c.Run)
	}
	return SeedFile(dir, role), nil
}
