package decompose

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/mdap-go/mdap/internal/safefile"
	mjournal "github.com/mdap-go/mdap/maker/journal"
)

// Journal errors, for errors.Is.
var (
	// ErrJournalMismatch: the journal is of another problem or other
	// settings (its fingerprint differs), or signed differently than
	// asked; nothing is changed.
	ErrJournalMismatch = errors.New("journal is of another run")
	// ErrJournalCorrupt: a whole line of the journal is not a record, or
	// does not match the hash chain (changed, dropped, moved, or signed
	// with another key).
	ErrJournalCorrupt = errors.New("journal corrupt")
	// ErrJournalLocked: another process (or Journal) holds the journal.
	ErrJournalLocked = errors.New("journal in use")
	// ErrJournalKey: the signing key cannot be found or made, or the
	// state folder that keeps it and the chain heads cannot be used.
	ErrJournalKey = errors.New("journal key unusable")
	// ErrJournalRollback: a signed journal holds fewer whole lines than
	// the chain head the state folder recorded for it (it was cut back,
	// or an older copy was put back), other lines up to it, or the state
	// folder has no head for it; nothing is changed.
	ErrJournalRollback = errors.New("journal does not match its recorded chain head")
)

// journalFormat is the version of the journal's format: 2 has a run id
// and, signed, a chain head in the state folder; 1 had neither.
const journalFormat = 2

// keyFile is the signing key's file in the state folder (journal.StateDir),
// headsDir the folder of the signed journals' chain heads.
const (
	keyFile  = "decompose.key"
	headsDir = "decompose-heads"
)

// header is a journal's first line.
type header struct {
	Format      int             `json:"mdap_decompose"`
	Run         string          `json:"run,omitempty"`
	Family      string          `json:"family"`
	Input       json.RawMessage `json:"input"`
	Fingerprint string          `json:"fingerprint"`
	Signed      bool            `json:"signed"`
}

// Record is one journaled decision.
type Record struct {
	// Node is the node's path ("r", "r.0", "r.0.1", ...) and Role the
	// decision's role; Part tells decisions of one role at one node apart
	// ("candidates" beside the pick).
	Node string `json:"node"`
	Role Role   `json:"role"`
	Part string `json:"part,omitempty"`
	// Value is the decision, canonical JSON.
	Value json.RawMessage `json:"value"`
	// Samples, Cost and Wall are what deciding it took.
	Samples int     `json:"samples"`
	Cost    float64 `json:"cost"`
	Wall    int64   `json:"wall_ns"`
	// Wrong and CoFailed are the truth's verdict, when one is known.
	Wrong    bool `json:"wrong,omitempty"`
	CoFailed bool `json:"cofailed,omitempty"`
}

func recordKey(node string, r Role, part string) string { return node + "|" + string(r) + "|" + part }

// journal is a decomposition's journal file: a header, then one record a
// line, each line ending in a chain field: HMAC-SHA256 under the key (or
// SHA-256 when unsigned) of the previous line's chain and this line.
// Every append is written and synced before it returns. A signed
// journal's chain head (its whole lines and the last one's chain value)
// is kept in the state folder after every append, so that a journal cut
// back to whole lines, or an older copy put back, is refused instead of
// silently deciding its lost decisions again (the chain alone cannot see
// lines dropped at its end).
type journal struct {
	mu    sync.Mutex
	store lineStore
	path  string // the store's name, in messages
	key   []byte
	prev  []byte
	lines int
	run   string
	heads string // the heads' folder; "" when unsigned
	known map[string]Record
}

// chainHead is what the state folder records of a signed journal.
type chainHead struct {
	Lines   int    `json:"lines"`
	Chain   string `json:"chain"`   // the chain value of line Lines, hex
	Journal string `json:"journal"` // its path, for people who look
}

// newRunID is a journal's random run id: 16 bytes, hex.
func newRunID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand's contract)
	return hex.EncodeToString(b)
}

// headsFolder is the state folder's folder of chain heads, made private.
func headsFolder() (string, error) {
	dir, err := mjournal.StateDir()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrJournalKey, err)
	}
	dir = filepath.Join(dir, headsDir)
	if err := safefile.PrivateDir(dir); err != nil {
		return "", fmt.Errorf("%w: the state folder's chain heads (%s): %w", ErrJournalKey, mjournal.StateDirEnv, err)
	}
	return dir, nil
}

// loadHead returns the head recorded for run, or an error wrapping
// fs.ErrNotExist when there is none.
func loadHead(dir, run string) (*chainHead, error) {
	path := filepath.Join(dir, run+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var h chainHead
	if err := json.Unmarshal(b, &h); err != nil || h.Lines < 1 {
		return nil, fmt.Errorf("%w: %s is not a chain head; it was damaged", ErrJournalKey, path)
	}
	return &h, nil
}

// saveHead records the journal's head: a new file renamed over the last
// (0600), after the journal's line was synced. A kill between the two
// leaves the head a line behind, which the next open accepts.
func (j *journal) saveHead() error {
	if j.heads == "" {
		return nil
	}
	b, _ := json.Marshal(chainHead{Lines: j.lines, Chain: hex.EncodeToString(j.prev), Journal: j.path})
	tmp, err := os.CreateTemp(j.heads, j.run+".new*")
	if err != nil {
		return fmt.Errorf("journal head: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(b, '\n'))
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return fmt.Errorf("journal head: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(j.heads, j.run+".json")); err != nil {
		return fmt.Errorf("journal head: %w", err)
	}
	return nil
}

// chainSum is the chain value of line after prev.
func chainSum(key, prev, line []byte) []byte {
	var h hash.Hash
	if key != nil {
		h = hmac.New(sha256.New, key)
	} else {
		h = sha256.New()
	}
	h.Write(prev)
	h.Write(line)
	return h.Sum(nil)
}

// sealed is v's JSON line with its chain field, and the new chain value.
func sealed(key, prev []byte, v any) (line, sum []byte, err error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	sum = chainSum(key, prev, body)
	line = append(body[:len(body)-1], `,"chain":"`...)
	line = append(line, hex.EncodeToString(sum)...)
	return append(line, `"}`+"\n"...), sum, nil
}

// unseal splits a line into its body (without the chain field) and chain.
func unseal(line []byte) (body, sum []byte, err error) {
	i := bytes.LastIndex(line, []byte(`,"chain":"`))
	if i < 0 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return nil, nil, errors.New("no chain field")
	}
	sum, err = hex.DecodeString(string(line[i+len(`,"chain":"`) : len(line)-2]))
	if err != nil {
		return nil, nil, err
	}
	body = append(append([]byte{}, line[:i]...), '}')
	return body, sum, nil
}

// journalKey returns the signing key: key if given, else the one in
// journal.KeyEnv, else the state folder's (made on first use, 0600).
func journalKey(key []byte) ([]byte, error) {
	if len(key) > 0 {
		if len(key) < mjournal.MinKey {
			return nil, fmt.Errorf("%w: the key holds %d bytes; use at least %d", ErrJournalKey, len(key), mjournal.MinKey)
		}
		return key, nil
	}
	if k := os.Getenv(mjournal.KeyEnv); k != "" {
		return journalKey([]byte(k))
	}
	dir, err := mjournal.StateDir()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJournalKey, err)
	}
	path := filepath.Join(dir, keyFile)
	if b, err := os.ReadFile(path); err == nil {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("%w: %s may be read by others; run chmod 600 %s", ErrJournalKey, path, path)
		}
		k, err := hex.DecodeString(string(bytes.TrimSpace(b)))
		if err != nil || len(k) < mjournal.MinKey {
			return nil, fmt.Errorf("%w: %s is not a key (64 hex digits)", ErrJournalKey, path)
		}
		return k, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrJournalKey, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJournalKey, err)
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	tmp, err := os.CreateTemp(dir, keyFile+".new*")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJournalKey, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(raw) + "\n")
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJournalKey, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %w", ErrJournalKey, err)
	}
	return journalKey(nil) // the one linked first, ours or another process's
}

// openJournal opens or creates the journal file at path for h, locks it,
// and opens it as openJournalOn does. Errors: ErrJournalLocked; those of
// openJournalOn; the file system's.
func openJournal(path string, h header, key []byte, unsigned bool) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrJournalLocked, path)
	}
	return openJournalOn(&fileLines{f: f, path: path}, h, key, unsigned)
}

// openJournalOn opens or creates the journal kept in store for h,
// verifies its chain and reads its records. A torn last line (a write a
// kill cut short) is dropped. On an error the store is closed. Errors:
// ErrJournalMismatch, ErrJournalCorrupt, ErrJournalKey, ErrJournalRollback,
// or the store's.
func openJournalOn(store lineStore, h header, key []byte, unsigned bool) (*journal, error) {
	if !unsigned {
		var err error
		if key, err = journalKey(key); err != nil {
			store.close()
			return nil, err
		}
	} else {
		key = nil
	}
	h.Format, h.Signed = journalFormat, !unsigned
	j := &journal{store: store, path: store.name(), key: key, known: map[string]Record{}}
	if !unsigned {
		var err error
		if j.heads, err = headsFolder(); err != nil {
			store.close()
			return nil, err
		}
	}
	if err := j.read(j.path, h); err != nil {
		store.close()
		return nil, err
	}
	return j, nil
}

// read verifies and loads the journal, or writes h to an empty one. A
// signed journal is checked against its chain head: it must hold the
// head's lines at least, the head's last one among them.
func (j *journal) read(path string, h header) error {
	data, err := j.store.read()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	whole := bytes.LastIndexByte(data, '\n') + 1 // a torn tail after it is dropped
	sc := bufio.NewScanner(bytes.NewReader(data[:whole]))
	sc.Buffer(nil, mjournal.MaxLine)
	n := 0
	var head *chainHead
	noHead := false
	for sc.Scan() {
		n++
		body, sum, err := unseal(sc.Bytes())
		if err != nil || !hmac.Equal(sum, chainSum(j.key, j.prev, body)) {
			if n == 1 {
				var got header
				if json.Unmarshal(body, &got) == nil && got.Signed != h.Signed {
					return fmt.Errorf("%w: %s is %s; open it %s", ErrJournalMismatch, path, signedWord(got.Signed), signedWord(got.Signed))
				}
			}
			return fmt.Errorf("%w: %s line %d does not match the hash chain (changed, moved, or signed with another key)", ErrJournalCorrupt, path, n)
		}
		j.prev = sum
		if n == 1 {
			var got header
			if err := json.Unmarshal(body, &got); err != nil || got.Format == 0 {
				return fmt.Errorf("%w: %s line 1 is not a decomposition journal's header", ErrJournalCorrupt, path)
			}
			if got.Format != journalFormat {
				return fmt.Errorf("%w: %s was written by another mdap (decomposition journal format %d, this one reads %d); start the run over with another file", ErrJournalMismatch, path, got.Format, journalFormat)
			}
			if got.Fingerprint != h.Fingerprint || got.Family != h.Family || !bytes.Equal(got.Input, h.Input) {
				return fmt.Errorf("%w: %s is of another problem or other settings (family %s, input %s); use another path or the same settings", ErrJournalMismatch, path, got.Family, got.Input)
			}
			if len(got.Run) != 32 {
				return fmt.Errorf("%w: %s line 1 has no run id", ErrJournalCorrupt, path)
			}
			j.run = got.Run
			if head, noHead, err = j.head(); err != nil {
				return err
			}
		} else {
			var r Record
			if err := json.Unmarshal(body, &r); err != nil {
				return fmt.Errorf("%w: %s line %d: %w", ErrJournalCorrupt, path, n, err)
			}
			j.known[recordKey(r.Node, r.Role, r.Part)] = r
		}
		if head != nil && n == head.Lines {
			if hex.EncodeToString(sum) != head.Chain {
				return fmt.Errorf("%w: %s line %d is not the line recorded when it was last written: the journal was replaced by another copy; restore the newer copy, or start the run over with another file", ErrJournalRollback, path, n)
			}
			head = nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrJournalCorrupt, path, err)
	}
	if head != nil {
		return fmt.Errorf("%w: %s holds %d whole lines, but it held %d when it was last written (%s): it was cut back, or an older copy was put back, and %d decisions would be decided again; restore the newer copy, or start the run over with another file",
			ErrJournalRollback, path, n, head.Lines, filepath.Join(j.heads, j.run+".json"), head.Lines-n)
	}
	if noHead && n > 1 {
		return fmt.Errorf("%w: the state folder has no chain head for %s (run %s): it was not written with this state folder (%s), or its head was removed; resume it with the state folder that wrote it, or start the run over with another file",
			ErrJournalRollback, path, j.run, mjournal.StateDirEnv)
	}
	j.lines = n
	if err := j.store.cut(int64(whole)); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if n == 0 {
		h.Run = newRunID()
		j.run = h.Run
		return j.append(h)
	}
	return nil
}

// head returns the chain head recorded for a signed journal's run, or
// noHead when there is none; an unsigned journal whose run has a head is
// a signed one rewritten, and refused.
func (j *journal) head() (head *chainHead, noHead bool, err error) {
	if j.heads == "" {
		if dir, derr := mjournal.StateDir(); derr == nil {
			if _, lerr := loadHead(filepath.Join(dir, headsDir), j.run); lerr == nil {
				return nil, false, fmt.Errorf("%w: %s says it is unsigned, but its run %s was signed when it was written (the state folder records it): it was rewritten; restore the signed copy, or start the run over with another file", ErrJournalRollback, j.path, j.run)
			}
		}
		return nil, false, nil
	}
	head, err = loadHead(j.heads, j.run)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	return head, false, err
}

func signedWord(signed bool) string {
	if signed {
		return "signed (without JournalUnsigned)"
	}
	return "unsigned (with JournalUnsigned)"
}

// lookup returns the journaled decision, if any.
func (j *journal) lookup(node string, r Role, part string) (Record, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rec, ok := j.known[recordKey(node, r, part)]
	return rec, ok
}

// record appends rec, written and synced before it returns.
func (j *journal) record(rec Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.appendLocked(rec); err != nil {
		return err
	}
	j.known[recordKey(rec.Node, rec.Role, rec.Part)] = rec
	return nil
}

func (j *journal) append(v any) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.appendLocked(v)
}

func (j *journal) appendLocked(v any) error {
	line, sum, err := sealed(j.key, j.prev, v)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := j.store.append(line); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.prev = sum
	j.lines++
	return j.saveHead()
}

// close releases the store and its lock.
func (j *journal) close() error { return j.store.close() }
