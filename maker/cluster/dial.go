package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// credsError is a client's credential refused before any connection: its
// text is the whole message, and it wraps ErrConfig (and its cause)
// without saying so in the text.
type credsError struct {
	msg   string
	cause error
}

func (e *credsError) Error() string { return e.msg }

func (e *credsError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrConfig}
	}
	return []error{ErrConfig, e.cause}
}

func credsErrorf(cause error, format string, a ...any) error {
	return &credsError{msg: fmt.Sprintf(format, a...), cause: cause}
}

// from is Resolve's "which named it", with Path named as PathName says.
func (c ClientCreds) from(from string) string {
	if from == "Path" {
		return cmp.Or(c.PathName, "Path")
	}
	return from
}

// SignIn returns the options that sign a client of role in as name, and
// how it signs in, for ConnectHint ("the worker credential PATH", "the
// token in $MDAP_NATS_TOKEN", "no credentials"): the seed file c
// resolves to (Resolve; for a folder the seed SeedIn picks for role),
// else the token in $MDAP_NATS_TOKEN (TokenEnv), else none. It reads
// files only. Every error wraps ErrConfig and says what to give instead:
// a folder without role's seed (wrapping ErrNoIdentity or ErrNoRunKey
// too), an Identity with a seed file rather than a folder, a file that
// is missing or no nkey seed (wrapping ErrAuth).
func (c ClientCreds) SignIn(role Role, name string) ([]nats.Option, string, error) {
	path, from := c.Resolve()
	from = c.from(from)
	if path == "" {
		if tok := os.Getenv(TokenEnv); tok != "" {
			return []nats.Option{nats.Token(tok)}, "the token in $" + TokenEnv, nil
		}
		return nil, "no credentials", nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if path, err = c.seedFor(path, from, role); err != nil {
			return nil, "", err
		}
	} else if c.Identity != "" {
		return nil, "", credsErrorf(nil, "--identity %s picks workers/%s.nk from a credentials folder, and %s names the seed file %s: give the folder, or leave --identity out", c.Identity, c.Identity, from, path)
	}
	opts, err := Credentials(path, name)
	if err != nil {
		return nil, "", credsErrorf(err, "%s: %v (give the %s seed maker nats wrote, %s)", from, err, role, SeedFile("STORE/creds", role))
	}
	return opts, "the " + string(role) + " credential " + path, nil
}

// seedFor is SeedIn with its errors saying what to do: maker worker
// --identity for a worker, maker nats run add for a coordinator.
func (c ClientCreds) seedFor(dir, from string, role Role) (string, error) {
	seed, err := c.SeedIn(dir, role)
	switch {
	case err == nil:
		return seed, nil
	case role == RoleWorker && errors.Is(err, ErrConfig) && c.Identity == "":
		return "", credsErrorf(err, "%s: %v: give --identity NAME", from, err)
	case role == RoleWorker:
		return "", credsErrorf(err, "%s: %v (maker worker --identity NAME picks workers/NAME.nk from a folder; or give --nats-creds NAME.nk)", from, err)
	}
	run := cmpRun(c.Run)
	return "", credsErrorf(err, "%s: %s holds no coordinator key: neither runs/%s.nk nor the shared coordinator.nk (maker nats makes it only with --shared-coordinator); issue a key of this run with maker nats run add %s, and give --journal nats:%s (or --queue %s to maker solve) and --nats-creds %s", from, dir, run, run, run, run, filepath.Join(dir, runsFolder, run+".nk"))
}

// Dial connects to the engine at url as a client of role named name,
// signed in with c (SignIn), and returns the connection with its
// JetStream context; the caller closes the connection. Errors: SignIn's
// (ErrConfig) before any connection; a server that refused the
// credential or did not answer wraps ErrEngine, its text ending with
// ConnectHint's advice in parentheses.
func Dial(url string, c ClientCreds, role Role, name string) (*nats.Conn, jetstream.JetStream, error) {
	opts, how, err := c.SignIn(role, name)
	if err != nil {
		return nil, nil, err
	}
	nc, err := Connect(url, name, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (%s)", err, ConnectHint(err, how))
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	return nc, js, nil
}
