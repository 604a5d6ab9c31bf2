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
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/mdap-go/mdap/maker"
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
	// ErrJournalKey: the signing key cannot be found or made.
	ErrJournalKey = errors.New("journal key unusable")
)

// journalFormat is the version of the journal's format.
const journalFormat = 1

// keyFile is the signing key's file in the state folder (maker.StateDir).
const keyFile = "decompose.key"

// header is a journal's first line.
type header struct {
	Format      int             `json:"mdap_decompose"`
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
// Every append is written and synced before it returns.
type journal struct {
	mu    sync.Mutex
	f     *os.File
	key   []byte
	prev  []byte
	known map[string]Record
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
// maker.JournalKeyEnv, else the state folder's (made on first use, 0600).
func journalKey(key []byte) ([]byte, error) {
	if len(key) > 0 {
		if len(key) < maker.MinJournalKey {
			return nil, fmt.Errorf("%w: the key holds %d bytes; use at least %d", ErrJournalKey, len(key), maker.MinJournalKey)
		}
		return key, nil
	}
	if k := os.Getenv(maker.JournalKeyEnv); k != "" {
		return journalKey([]byte(k))
	}
	dir, err := maker.StateDir()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJournalKey, err)
	}
	path := filepath.Join(dir, keyFile)
	if b, err := os.ReadFile(path); err == nil {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("%w: %s may be read by others; run chmod 600 %s", ErrJournalKey, path, path)
		}
		k, err := hex.DecodeString(string(bytes.TrimSpace(b)))
		if err != nil || len(k) < maker.MinJournalKey {
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

// openJournal opens or creates the journal at path for h, locks it,
// verifies its chain and reads its records. A torn last line (a write a
// kill cut short) is dropped. Errors: ErrJournalMismatch, ErrJournalCorrupt,
// ErrJournalLocked, ErrJournalKey, or the file system's.
func openJournal(path string, h header, key []byte, unsigned bool) (*journal, error) {
	if !unsigned {
		var err error
		if key, err = journalKey(key); err != nil {
			return nil, err
		}
	} else {
		key = nil
	}
	h.Format, h.Signed = journalFormat, !unsigned
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrJournalLocked, path)
	}
	j := &journal{f: f, key: key, known: map[string]Record{}}
	if err := j.read(path, h); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// read verifies and loads the journal, or writes h to an empty one.
func (j *journal) read(path string, h header) error {
	data, err := io.ReadAll(j.f)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	whole := bytes.LastIndexByte(data, '\n') + 1 // a torn tail after it is dropped
	sc := bufio.NewScanner(bytes.NewReader(data[:whole]))
	sc.Buffer(nil, maker.MaxJournalLine)
	n := 0
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
			if err := json.Unmarshal(body, &got); err != nil || got.Format != journalFormat {
				return fmt.Errorf("%w: %s line 1 is not a decomposition journal's header", ErrJournalCorrupt, path)
			}
			if got.Fingerprint != h.Fingerprint || got.Family != h.Family || !bytes.Equal(got.Input, h.Input) {
				return fmt.Errorf("%w: %s is of another problem or other settings (family %s, input %s); use another path or the same settings", ErrJournalMismatch, path, got.Family, got.Input)
			}
			continue
		}
		var r Record
		if err := json.Unmarshal(body, &r); err != nil {
			return fmt.Errorf("%w: %s line %d: %w", ErrJournalCorrupt, path, n, err)
		}
		j.known[recordKey(r.Node, r.Role, r.Part)] = r
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrJournalCorrupt, path, err)
	}
	if err := j.f.Truncate(int64(whole)); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := j.f.Seek(int64(whole), io.SeekStart); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if n == 0 {
		return j.append(h)
	}
	return nil
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
	if _, err := j.f.Write(line); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.prev = sum
	return nil
}

// close releases the file and its lock.
func (j *journal) close() error { return j.f.Close() }
