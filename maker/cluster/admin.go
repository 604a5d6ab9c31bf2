package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/mdap-go/mdap/maker/journal"
)

// NotAdminError is the error of an admin request the server refused
// because the credential the client signed in with is not the admin's:
// its text says which credential was given and where the admin's is.
type NotAdminError struct{ msg string }

func (e *NotAdminError) Error() string { return e.msg }

// AdminContext returns the context of an admin command's requests on nc:
// ended after timeout, and at once, with a *NotAdminError as its cause
// (AdminErr), when the server answers a request with a permissions
// violation: a request the role may not send is never answered, and
// without it the command would wait out timeout and say only "context
// deadline exceeded". The NotAdminError names command and the credential
// creds resolves to. It sets nc's error handler: one admin context on a
// connection at a time; cancel releases it.
func AdminContext(parent context.Context, nc *nats.Conn, timeout time.Duration, command string, creds ClientCreds) (context.Context, context.CancelFunc) {
	ctx, refuse := context.WithCancelCause(parent)
	timed, cancel := context.WithTimeout(ctx, timeout)
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			refuse(&NotAdminError{notAdmin(command, creds, err)})
		}
	})
	return timed, func() { cancel(); refuse(nil) }
}

// AdminErr is the error of a request made under an AdminContext: the
// *NotAdminError that ended ctx, else err.
func AdminErr(ctx context.Context, err error) error {
	var na *NotAdminError
	if errors.As(context.Cause(ctx), &na) {
		return na
	}
	return err
}

// notAdmin says that command needs the admin's credential, which one it
// was given (its role, SeedRole), and where the admin's is.
func notAdmin(command string, creds ClientCreds, err error) string {
	path, from := creds.Resolve()
	from = creds.from(from)
	given := "the credential it was given"
	admin := SeedFile("STORE/creds", RoleAdmin)
	if path != "" {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			path = SeedFile(path, RoleAdmin)
		}
		given = fmt.Sprintf("the credential %s (%s)", path, from)
		if role := SeedRole(path); role != "" {
			given = fmt.Sprintf("the %s credential %s (%s)", role, path, from)
		}
		if a := SeedFile(filepath.Dir(path), RoleAdmin); a != path {
			if _, serr := os.Stat(a); serr == nil {
				admin = a
			}
		}
	}
	return fmt.Sprintf("%s needs the admin's credential, and was given %s: the server refused it (%v); give the admin's seed: --nats-creds %s (or its folder, or $%s)", command, given, err, admin, CredsEnv)
}

// SeedRole names the role of the seed file path, as the files around it
// say: the role whose ROLE.pub in its folder lists the seed's public key,
// else its folder's ("worker" in workers/, "run coordinator" in runs/),
// else its name's (ROLE.nk). It is "" when none says (or path cannot be
// read). It reads files only.
func SeedRole(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var pub string
	if kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(raw)))); err == nil {
		pub, _ = kp.PublicKey()
	}
	roles := []Role{RoleAdmin, RoleCoordinator, RoleWorker}
	for _, r := range roles {
		keys, err := os.ReadFile(PubFile(filepath.Dir(path), r))
		if pub != "" && err == nil && slices.Contains(strings.Fields(string(keys)), pub) {
			return string(r)
		}
	}
	switch filepath.Base(filepath.Dir(path)) {
	case workersFolder:
		return string(RoleWorker)
	case runsFolder:
		return "run coordinator"
	}
	for _, r := range roles {
		if filepath.Base(path) == filepath.Base(SeedFile("", r)) {
			return string(r)
		}
	}
	return ""
}

// WriteLeftovers writes list (List's) to w: with asJSON an indented JSON
// array ("[]" for none), else a table of KIND, NAME, MESSAGES, BYTES,
// LAST WRITE (RFC 3339, UTC), KEPT and HELD BY, one row each, "-" where
// a value is not known. Errors are w's.
func WriteLeftovers(w io.Writer, list []Leftover, asJSON bool) error {
	if asJSON {
		if list == nil {
			list = []Leftover{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tMESSAGES\tBYTES\tLAST WRITE\tKEPT\tHELD BY")
	for _, l := range list {
		last := "-"
		if !l.Last.IsZero() {
			last = l.Last.UTC().Format(time.RFC3339)
		}
		kept := "until removed"
		if l.Retention > 0 {
			kept = l.Retention.String()
			if l.Kind == "route" {
				kept = "idle " + kept
			}
		}
		msgs := fmt.Sprint(l.Messages)
		if l.Kind == "tasks" {
			msgs = fmt.Sprintf("%d (+%d results)", l.Messages, l.Results)
		}
		kind, size, holder := l.Kind, "-", "-" // a shared stream counts messages per run, not bytes
		if l.Bytes > 0 {
			size = fmt.Sprint(l.Bytes)
		}
		if l.Legacy {
			kind += " (earlier mdap)"
		}
		if l.Holder != "" {
			holder = l.Holder
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", kind, l.Name, msgs, size, last, kept, holder)
	}
	return tw.Flush()
}

// AdminTimeout bounds an admin's request (Admin.Do): what maker nats ls
// and rm wait for the engine.
const AdminTimeout = 30 * time.Second

// Admin is the admin's side of the engine (maker nats ls, rm, provision):
// a connection signed in with the admin's credential (OpenAdmin) whose
// requests end at once, saying which credential was given, when the
// server refuses it (Do). Close closes the connection. It is for one
// goroutine: Do sets the connection's error handler.
type Admin struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	creds ClientCreds
}

// OpenAdmin checks url (as CoordinatorConfig.Validate does) and connects
// to the engine there as the admin (Dial, RoleAdmin), signed in with
// creds. Errors: a URL no client could dial is a *fielderr.Error naming
// "URL", wrapping ErrConfig, as SignIn's are, before any connection; a
// server that refused the credential or did not answer wraps ErrEngine.
func OpenAdmin(url string, creds ClientCreds) (*Admin, error) {
	if err := (CoordinatorConfig{URL: url, Keep: MinRetention}).Validate(); err != nil {
		return nil, err
	}
	nc, js, err := Dial(url, creds, RoleAdmin, "maker nats admin")
	if err != nil {
		return nil, err
	}
	return &Admin{nc: nc, js: js, creds: creds}, nil
}

// Conn is the admin's connection (ServeAgent's) and its JetStream
// context (ProvisionWhenReady's, ProvisionRoute's): the Admin's to close.
func (a *Admin) Conn() (*nats.Conn, jetstream.JetStream) { return a.nc, a.js }

// List is the package's List under the admin's bound (do, as maker nats
// ls): its errors, or the *NotAdminError of a refused credential.
func (a *Admin) List(ctx context.Context) ([]Leftover, error) {
	var list []Leftover
	err := a.do(ctx, "maker nats ls", func(ctx context.Context) (err error) {
		list, err = List(ctx, a.js)
		return err
	})
	return list, err
}

// RemoveRuns removes, in order, what each of runs left on the engine
// (RemoveRun, each under the admin's bound, as maker nats rm). It returns
// what it removed, the runs of which nothing was found (ErrNotFound), and
// the first other error, where it stops: a run in progress wraps
// journal.ErrLocked and names the run; a refused credential is a
// *NotAdminError; else RemoveRun's.
func (a *Admin) RemoveRuns(ctx context.Context, runs []string) (removed, missing []string, err error) {
	for _, run := range runs {
		var gone []string
		err := a.do(ctx, "maker nats rm", func(ctx context.Context) (err error) {
			gone, err = RemoveRun(ctx, a.js, run)
			return err
		})
		removed = append(removed, gone...)
		switch {
		case errors.Is(err, ErrNotFound):
			missing = append(missing, run)
		case errors.Is(err, journal.ErrLocked):
			return removed, missing, fmt.Errorf("%s is in progress, not removed: %w", run, err)
		case err != nil:
			return removed, missing, err
		}
	}
	return removed, missing, nil
}

// do runs req under an AdminContext of ctx for command (the name its
// refusal gives), ended after AdminTimeout: req's error, or the
// *NotAdminError of a credential the server refused (AdminErr), which
// ends req at once.
func (a *Admin) do(ctx context.Context, command string, req func(ctx context.Context) error) error {
	ctx, cancel := AdminContext(ctx, a.nc, AdminTimeout, command, a.creds)
	defer cancel()
	if err := req(ctx); err != nil {
		return AdminErr(ctx, err)
	}
	return nil
}

// Close flushes and closes the connection; it is safe to call more than
// once.
func (a *Admin) Close() {
	_ = a.nc.Flush()
	a.nc.Close()
}
