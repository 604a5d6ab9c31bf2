package journal

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/mdap-go/mdap/internal/atomicfile"
	"github.com/mdap-go/mdap/internal/safefile"
)

// This file keeps what signs a journal and what dates it outside the
// journal: the signing key, made on first use, and each journal's chain
// head (how many lines it held, and its last line's chain value, when it
// was last checkpointed or closed), in the user's state folder. A journal
// holding fewer lines than its head, or other lines up to it, was
// truncated or rolled back to an older copy; one whose state folder has
// no head for it was not written with this state folder.

// StateDirEnv names the environment variable that, when set and not
// empty, is the state folder (StateDir); tests and users who keep mdap's
// state elsewhere set it.
const StateDirEnv = "MDAP_STATE_DIR"

// keyFile is the signing key's file in the state folder, headsDir the
// folder of the chain heads.
const (
	keyFile  = "journal.key"
	headsDir = "journal-heads"
)

// ErrRollback: the journal is older than the state folder's record
// of it (truncated, or an older copy put back), or the state folder holds
// no record of it.
var ErrRollback = errors.New("journal does not match its recorded chain head")

// ErrState: the state folder (StateDir) cannot be used: it cannot
// be made or written, or its key file is unreadable, malformed, or
// readable by others.
var ErrState = errors.New("mdap state folder unusable")

// StateDir returns the folder where mdap keeps the journal signing key and
// the journals' chain heads: $MDAP_STATE_DIR, else
// $XDG_STATE_HOME/mdap, else ~/.local/state/mdap. It makes nothing.
// Errors: ErrState when there is no home folder to put it in.
func StateDir() (string, error) {
	if d := os.Getenv(StateDirEnv); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Abs(filepath.Join(d, "mdap"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%w: no home folder (%v); set %s to a folder only you can read", ErrState, err, StateDirEnv)
	}
	return filepath.Join(home, ".local", "state", "mdap"), nil
}

// Option changes how New signs a journal.
type Option func(*journalOptions)

type journalOptions struct{ unsigned bool }

// Unsigned opts out of signing (the CLI's --journal-unsigned): a
// new journal is chained with plain SHA-256 and no chain head is kept, so
// a forger who recomputes the chain, a truncation and a rollback go
// unnoticed; only such a journal (or one of format version 3 written
// without a key) is resumed with it, and a signed journal is refused
// with it.
func Unsigned() Option {
	return func(o *journalOptions) { o.unsigned = true }
}

// journalTrust is what signs a journal and where its head is kept.
type journalTrust struct {
	key []byte // nil: unsigned
	// state is the state folder of the heads: written for a signed
	// journal, only read for an unsigned one (to refuse an unsigned copy
	// of a run recorded as signed); "" when unsigned and there is none.
	state string
}

// resolveTrust returns the key and the state folder a journal is signed
// with: none with Unsigned; else the key in KeyEnv if set, or the state
// folder's key (made on first use).
func resolveTrust(opts []Option) (journalTrust, error) {
	var o journalOptions
	for _, f := range opts {
		f(&o)
	}
	dir, err := StateDir()
	if o.unsigned {
		return journalTrust{state: dir}, nil // dir "" on an error: nothing to look up
	}
	if err != nil {
		return journalTrust{}, err
	}
	// Whoever else may write in the state folder could remove a
	// journal's head (and so hide a rollback) or swap the key.
	if err := safefile.PrivateDir(dir); err != nil {
		return journalTrust{}, fmt.Errorf("%w: the state folder (%s): %w", ErrState, StateDirEnv, err)
	}
	key, err := journalKey()
	if err != nil {
		return journalTrust{}, err
	}
	if key == nil {
		if key, err = stateKey(dir); err != nil {
			return journalTrust{}, err
		}
	}
	return journalTrust{key: key, state: dir}, nil
}

// stateKey returns the signing key kept in dir, making dir (0700) and the
// key (32 random bytes, hex, 0600) on first use. Two processes making it
// at once end with the same key: the key is linked into place, never
// overwritten.
func stateKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, keyFile)
	if k, err := readKey(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	tmp, err := os.CreateTemp(dir, keyFile+".new*")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(raw) + "\n")
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	// CreateTemp made it 0600; Link fails if another process was first.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	return readKey(path)
}

// readKey reads a key file, refusing one others may read.
func readKey(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s may be read by others (mode %s); run chmod 600 %s", ErrState, path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	k, err := hex.DecodeString(string(bytes.TrimRight(b, "\r\n")))
	if err != nil || len(k) < MinKey {
		return nil, fmt.Errorf("%w: %s is not a journal key (%d hex digits expected); move it away to make a new one (journals signed with it can then no longer be resumed)", ErrState, path, 64)
	}
	return k, nil
}

// chainHead is a journal's state as last recorded outside it.
type chainHead struct {
	Lines   int    `json:"lines"`
	Chain   string `json:"chain"`   // the chain value of line Lines, hex
	Journal string `json:"journal"` // its name, for people who look
}

var runIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// newRunID returns a journal's random run id: 16 bytes, hex.
func newRunID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand's contract)
	return hex.EncodeToString(b)
}

func headPath(state, run string) string {
	return filepath.Join(state, headsDir, run+".json")
}

// loadHead returns run's recorded head, or an error wrapping
// fs.ErrNotExist when none is recorded.
func loadHead(state, run string) (*chainHead, error) {
	b, err := os.ReadFile(headPath(state, run))
	if err != nil {
		return nil, err
	}
	var h chainHead
	if err := json.Unmarshal(b, &h); err != nil || h.Lines < 1 {
		return nil, fmt.Errorf("%w: %s is not a chain head; it was damaged", ErrState, headPath(state, run))
	}
	return &h, nil
}

// saveHead records run's head, replacing the last one whole (a new file
// renamed over it, 0600 in a 0700 folder).
func saveHead(state, run string, h chainHead) error {
	if err := os.MkdirAll(filepath.Join(state, headsDir), 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(headPath(state, run), 0o600, append(b, '\n')); err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	return nil
}
