package batch

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
)

// Store errors, for errors.Is.
var (
	// ErrLocked: another batch (in this process or another) holds the
	// results file or the state folder.
	ErrLocked = errors.New("in use by another batch")
	// ErrResultsCorrupt: a whole line of the results file is not a
	// result, or repeats a job's result. The file is left as it is.
	ErrResultsCorrupt = errors.New("results file is corrupt")
	// ErrStorePath: the results path is not a regular file, or the state
	// path not a folder, or either cannot be created.
	ErrStorePath = errors.New("bad results or state path")
	// ErrRecorded: Write was given a result for a job that has one.
	ErrRecorded = errors.New("job already has a result")
)

// MaxResultLine is the longest results line read back; a longer one is
// corruption.
const MaxResultLine = 16 << 20

// appender is what Write needs of the results file.
type appender interface {
	Write(b []byte) (int, error)
	Truncate(size int64) error
	Sync() error
}

// lockName is the lock file of a state folder.
const lockName = ".lock"

// Store is a batch's files: the results file, one JSON line per finished
// job, and an optional state folder holding one journal per job. Both are
// locked (flock, advisory; the state folder through its file ".lock")
// from OpenStore to Close, so a second batch on either is refused with
// ErrLocked. Beside the results file, its spend file (SpendPath) keeps
// what the batch has spent over every run, for a cap across runs
// (Runner.Budget); the results file's lock covers it.
//
// Durability: Write appends each line with a single write call to a file
// opened O_APPEND and syncs it before returning, so a line is whole or
// absent whatever kills the process; a line torn by a power loss is
// dropped by the next OpenStore. A Write that fails leaves the file as it
// was. Safe for concurrent use.
type Store struct {
	path, dir string // the results file, and its folder (absolute)
	f         *os.File
	out       appender // f, or a test's stand-in
	state     string
	lock      *os.File

	mu   sync.Mutex
	size int64
	done map[string]Result
	all  []Result
	torn int
	// spend is the spend file as read (see Spend).
	spend Spend

	// UnsignedJournals opts the tasks' journals out of signing
	// (journal.Unsigned); set it before the first Journal.
	UnsignedJournals bool
}

// OpenStore opens the results file at results, creating it if needed, and
// the state folder state ("" for none: then tasks keep no journal and an
// interrupted one starts over), creating it if needed; it locks both and
// reads the results recorded so far.
//
// Nothing is created or changed until both locks are held and the results
// file has been read: a refused open (ErrLocked, ErrResultsCorrupt,
// ErrStorePath) leaves every file as it was. Then a torn last line (no
// newline: a write cut short) is cut off; TornBytes says how long it was.
// Errors name the path and say how to fix it.
func OpenStore(results, state string) (_ *Store, err error) {
	if results == "" {
		return nil, fmt.Errorf("%w: no results file given", ErrStorePath)
	}
	dir, err := filepath.Abs(filepath.Dir(results))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorePath, err)
	}
	s := &Store{path: results, dir: dir, state: state, done: map[string]Result{}}
	var createdLock bool
	defer func() {
		if err != nil {
			s.release()
			if createdLock {
				os.Remove(filepath.Join(state, lockName))
			}
		}
	}()

	resultsExists, err := exists(results, false)
	if err != nil {
		return nil, err
	}
	stateExists := false
	if state != "" {
		if stateExists, err = exists(state, true); err != nil {
			return nil, err
		}
	}
	// 1. Lock what exists, creating nothing but a lock file in an
	// existing state folder.
	if stateExists {
		if createdLock, err = s.lockState(); err != nil {
			return nil, err
		}
	}
	if resultsExists {
		f, err := os.OpenFile(results, os.O_RDWR|os.O_APPEND|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStorePath, err)
		}
		s.f = f
		if err := flock(f, results, "--out"); err != nil {
			return nil, err
		}
		if err := s.read(); err != nil {
			return nil, err
		}
		if err := s.readSpend(); err != nil {
			return nil, err
		}
	}
	// 2. Create what is missing.
	if state != "" && !stateExists {
		if err := os.MkdirAll(state, 0o700); err != nil {
			return nil, fmt.Errorf("%w: create the state folder: %w", ErrStorePath, err)
		}
		if _, err := s.lockState(); err != nil {
			return nil, err
		}
	}
	if !resultsExists {
		f, err := os.OpenFile(results, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s was created by another batch meanwhile; wait for it to end, or use another --out", ErrLocked, results)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: create the results file: %w", ErrStorePath, err)
		}
		s.f = f
		if err := flock(f, results, "--out"); err != nil {
			return nil, err
		}
	}
	// 3. Cut a torn last line.
	if s.torn > 0 {
		if err := s.f.Truncate(s.size); err != nil {
			return nil, fmt.Errorf("results %s: cut the torn last line: %w", results, err)
		}
	}
	return s, nil
}

// exists reports whether path exists as the kind wanted (a folder, or a
// regular file); another kind is ErrStorePath.
func exists(path string, folder bool) (bool, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%w: %w", ErrStorePath, err)
	case folder && !fi.IsDir():
		return false, fmt.Errorf("%w: the state path %s is not a folder; give a folder (it is created if missing)", ErrStorePath, path)
	case !folder && !fi.Mode().IsRegular():
		return false, fmt.Errorf("%w: the results path %s is not a regular file; give a file name (it is created if missing)", ErrStorePath, path)
	}
	return true, nil
}

// lockState locks the state folder's lock file, creating it if needed.
func (s *Store) lockState() (created bool, err error) {
	p := filepath.Join(s.state, lockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		created = true
	} else if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(p, os.O_RDWR, 0)
	}
	if err != nil {
		return false, fmt.Errorf("%w: state folder %s: %w", ErrStorePath, s.state, err)
	}
	s.lock = f
	return created, flock(f, s.state, "--state")
}

func flock(f *os.File, path, flag string) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s is locked by another batch run; wait for it to end, or give another %s", ErrLocked, path, flag)
		}
		return fmt.Errorf("%w: lock %s: %w", ErrStorePath, path, err)
	}
	return nil
}

// read loads the results recorded so far.
func (s *Store) read() error {
	rs, end, torn, err := scanResults(s.f)
	if err != nil {
		return fmt.Errorf("results %s: %w", s.path, err)
	}
	for _, r := range rs {
		s.done[r.Key()] = r
	}
	s.all, s.size, s.torn = rs, end, torn
	return nil
}

// scanResults reads a results file: every whole line must be a result,
// and no two may share a key. It returns the results, the offset after
// the last whole line and the size of a torn last line.
func scanResults(r io.Reader) (rs []Result, end int64, torn int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	seen := map[string]int{}
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		var rerr error
		for {
			chunk, e := br.ReadSlice('\n')
			buf = append(buf, chunk...)
			if len(buf) > MaxResultLine {
				return nil, 0, 0, fmt.Errorf("%w: line %d is longer than %d bytes; a results file is only ever appended to by a batch: restore it from a copy, or give another results file", ErrResultsCorrupt, n, MaxResultLine)
			}
			if errors.Is(e, bufio.ErrBufferFull) {
				continue
			}
			rerr = e
			break
		}
		if errors.Is(rerr, io.EOF) {
			return rs, end, len(buf), nil
		}
		if rerr != nil {
			return nil, 0, 0, rerr
		}
		var res Result
		if err := json.Unmarshal(buf, &res); err != nil || !res.Status.valid() || (res.ID == "" && res.Line < 1) {
			why := "not a result"
			if err != nil {
				why += ": " + err.Error()
			}
			return nil, 0, 0, fmt.Errorf("%w: line %d is %s; a results file is only ever appended to by a batch: fix or remove that line, or give another results file", ErrResultsCorrupt, n, why)
		}
		if first, dup := seen[res.Key()]; dup {
			return nil, 0, 0, fmt.Errorf("%w: line %d repeats the result of %s from line %d; remove one of them", ErrResultsCorrupt, n, strings.Replace(res.Key(), ":", " ", 1), first)
		}
		seen[res.Key()] = n
		rs = append(rs, res)
		end += int64(len(buf))
	}
}

func (st Status) valid() bool {
	return st == StatusSolved || st == StatusFailed || st == StatusInvalid
}

// Path returns the results file's path.
func (s *Store) Path() string { return s.path }

// TornBytes returns the size of the torn last line OpenStore cut off; 0
// when there was none. That job runs again.
func (s *Store) TornBytes() int { return s.torn }

// Done returns the result recorded for job, if any.
func (s *Store) Done(job Job) (Result, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.done[job.Key()]
	return r, ok
}

// Recorded returns every result in the file, in file order.
func (s *Store) Recorded() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Result(nil), s.all...)
}

// Write appends r as one line and syncs it to disk before returning. The
// line is written by one write call; if it fails or is short, the file
// is cut back to its size before the call, so no half line stays.
// Errors: ErrRecorded for a job that has a result (nothing is written),
// and the file system's.
func (s *Store) Write(r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("results %s: %w", s.path, err)
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return fmt.Errorf("results %s: the store is closed", s.path)
	}
	if _, dup := s.done[r.Key()]; dup {
		return fmt.Errorf("%w: %s in %s", ErrRecorded, strings.Replace(r.Key(), ":", " ", 1), s.path)
	}
	out := s.out
	if out == nil {
		out = s.f
	}
	n, err := out.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if terr := out.Truncate(s.size); terr != nil {
			err = errors.Join(err, fmt.Errorf("cutting the partial line back: %w", terr))
		}
		return fmt.Errorf("results %s: %w", s.path, err)
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("results %s: sync: %w", s.path, err)
	}
	s.size += int64(len(b))
	s.done[r.Key()] = r
	s.all = append(s.all, r)
	return nil
}

// JournalPath returns the journal file of job in the state folder: its id
// made safe for a file name and a hash of the id, so that any two ids
// have different files ("" without a state folder, or for a job without
// an id).
func (s *Store) JournalPath(job Job) string {
	if s.state == "" || job.ID == "" {
		return ""
	}
	return filepath.Join(s.state, journalName(job.ID))
}

// journalName is the file name of an id's journal.
func journalName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if b.Len() >= 48 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	return b.String() + "-" + hex.EncodeToString(sum[:6]) + ".jsonl"
}

// Journal opens job's journal to resume it when it exists, or creates it
// (see journalfile.Open and journalfile.Create, whose errors it
// returns); nil without a state folder.
func (s *Store) Journal(job Job) (*journal.Journal, error) {
	p := s.JournalPath(job)
	if p == "" {
		return nil, nil
	}
	var opts []journal.Option
	if s.UnsignedJournals {
		opts = append(opts, journal.Unsigned())
	}
	if _, err := os.Lstat(p); err == nil {
		return journalfile.Open(p, opts...)
	}
	return journalfile.Create(p, opts...)
}

// Rel returns path relative to the results file's folder, when it can.
func (s *Store) Rel(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(s.dir, abs); err == nil {
		return rel
	}
	return path
}

// Close syncs and closes the results file and unlocks both. It is safe to
// call more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.f != nil {
		errs = append(errs, s.f.Sync())
	}
	errs = append(errs, s.release())
	return errors.Join(errs...)
}

func (s *Store) release() error {
	var errs []error
	if s.f != nil {
		errs = append(errs, s.f.Close())
		s.f = nil
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
		s.lock = nil
	}
	return errors.Join(errs...)
}
