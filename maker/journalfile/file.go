// Package journalfile keeps a journal.Journal in a file of lines:
// created without overwriting anything, locked with flock while open, a
// torn last line (a write a crash cut short) cut on the first append,
// and the periodic fsync run in the background.
package journalfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker/journal"
)

// fileStore is the journal.Store of Create and Open: a file of
// newline-terminated lines, locked with flock while open. A last line
// without its newline is a write a crash cut short: it is not a line, and
// the first Append cuts it.
type fileStore struct {
	f      *os.File
	w      *bufio.Writer
	path   string
	end    int64  // offset after the last whole line
	torn   []byte // the unterminated tail, if any
	placed bool   // the write position is at end, the torn tail cut
	loaded bool   // a full pass has run
	// index holds the offset of every indexEvery-th line, so Lines can
	// start near any line without reading the file from its start.
	index []int64

	// The periodic sync runs in the background (SyncBackground): syncing
	// is closed when the fsync in flight ends (nil: none), and bgErr is
	// a background fsync's failure, returned by the next call.
	mu      sync.Mutex
	syncing chan struct{}
	bgErr   error
}

const indexEvery = 1024

// fileBuffer is the size of a file journal's write buffer: a batch of
// DefaultSyncEvery steps of a 20-disk Hanoi run (about 120 KB) fits in
// it, so it is one write(2). Lines beyond it are written as the buffer
// fills (a kill then may leave a torn last line, which a resume drops).
const fileBuffer = 256 << 10

// Create creates a new journal at path and locks it. It refuses,
// wrapping journal.ErrExists, to overwrite anything that exists: no run's
// record is ever lost to a typo. Errors: journal.ErrExists,
// journal.ErrPath (the folder does not exist or is not writable, the
// path is empty, or it is in the state folder, beside the key),
// journal.ErrLocked, and journal.New's (ErrKey, ErrState: then the file
// is removed, so a bad key leaves nothing behind). The file is made
// 0600: only its owner reads a run's prompts and answers. It is signed
// unless journal.Unsigned is given.
func Create(path string, opts ...journal.Option) (*journal.Journal, error) {
	return openFile(path, true, opts)
}

// Open opens an existing journal file to resume its run, and locks
// it; see journal.New for what it reads and refuses. Errors also include
// journal.ErrPath for a path that is not a writable regular file (a FIFO
// is refused, not waited on) and journal.ErrLocked. Give journal.Unsigned
// to resume a journal written with it.
func Open(path string, opts ...journal.Option) (*journal.Journal, error) {
	return openFile(path, false, opts)
}

func openFile(path string, create bool, opts []journal.Option) (*journal.Journal, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: the path is empty", journal.ErrPath)
	}
	flag := os.O_RDWR | syscall.O_NONBLOCK
	if create {
		if err := besideKey(path); err != nil {
			return nil, err
		}
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: %s is %s", journal.ErrPath, path, words.FileKind(fi.Mode()))
		}
		flag = os.O_RDWR | os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("%w: %s (resume it, or remove it to start over)", journal.ErrExists, path)
	case errors.Is(err, fs.ErrNotExist) && !create:
		return nil, fmt.Errorf("%w: %s does not exist (start a run with it first)", journal.ErrPath, path)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", journal.ErrPath, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is %s", journal.ErrPath, path, words.FileKind(fi.Mode()))
	}
	var j *journal.Journal
	if err == nil {
		err = lock(f, path)
	}
	if err == nil {
		j, err = journal.New(&fileStore{f: f, w: bufio.NewWriterSize(f, fileBuffer), path: path}, opts...)
	}
	if err != nil {
		f.Close()
		if create {
			os.Remove(path)
		}
		return nil, err
	}
	return j, nil
}

// besideKey refuses a new journal in the state folder or below it: a
// key is never kept beside the journal it signs.
func besideKey(path string) error {
	state, err := journal.StateDir()
	if err != nil {
		return nil // journal.New says why there is no state folder
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%w: %w", journal.ErrPath, err)
	}
	if rel, err := filepath.Rel(state, filepath.Dir(abs)); err == nil && filepath.IsLocal(rel) {
		return fmt.Errorf("%w: %s is in mdap's state folder, beside the key that signs it; keep journals in another folder", journal.ErrPath, path)
	}
	return nil
}

func lock(f *os.File, path string) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s is locked by another process; wait for it to end, or use another journal file", journal.ErrLocked, path)
		}
		return fmt.Errorf("%w: lock %s: %w", journal.ErrPath, path, err)
	}
	return nil
}

func (s *fileStore) Name() string { return s.path }

// Lines reads the file from line from on; the first call (from 0) also
// finds the torn tail and builds the index.
func (s *fileStore) Lines(from int, fn func(n int, line []byte) error) error {
	start, n := int64(0), 0
	if from > 0 && len(s.index) > 0 {
		k := min(from/indexEvery, len(s.index)-1)
		start, n = s.index[k], k*indexEvery
	}
	full := from == 0 && !s.loaded
	lr := &lineReader{r: bufio.NewReaderSize(io.NewSectionReader(s.f, start, 1<<62), 1<<16)}
	off := start
	for ; ; n++ {
		line, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			return fmt.Errorf("line %d is %w", n+1, err)
		}
		if errors.Is(err, io.EOF) {
			if full {
				s.end, s.loaded = off, true
				s.torn = bytes.Clone(line)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", s.path, err)
		}
		if full && n%indexEvery == 0 {
			s.index = append(s.index, off)
		}
		off += int64(len(line))
		if n >= from {
			if err := fn(n, line[:len(line)-1]); err != nil {
				return err
			}
		}
	}
}

func (s *fileStore) Torn() []byte { return s.torn }

// background returns, and clears, the failure of a background fsync.
func (s *fileStore) background() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.bgErr
	s.bgErr = nil
	if err != nil {
		return fmt.Errorf("sync %s: %w", s.path, err)
	}
	return nil
}

// settle waits for the fsync in flight, if any.
func (s *fileStore) settle() {
	s.mu.Lock()
	c := s.syncing
	s.mu.Unlock()
	if c != nil {
		<-c
	}
}

// SyncBackground writes the buffered lines to the file and starts an
// fsync in the background, unless one is in flight; it does not wait for
// the disk. A failed fsync fails the next call. The journal calls it for
// the periodic sync, so that the steps go on while the disk works.
func (s *fileStore) SyncBackground() error {
	if err := s.background(); err != nil {
		return err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.syncing != nil {
		select {
		case <-s.syncing:
		default:
			return nil // the next period syncs what this one wrote
		}
	}
	done := make(chan struct{})
	s.syncing = done
	go func() {
		err := s.f.Sync()
		s.mu.Lock()
		if err != nil && s.bgErr == nil {
			s.bgErr = err
		}
		s.mu.Unlock()
		close(done)
	}()
	return nil
}

// Append writes line and a newline after the last whole line, cutting a
// torn tail first. It copies line into the file's buffer; a background
// fsync's failure fails the next Flush (at most SyncEvery steps later),
// not every Append, which would take a lock per step.
func (s *fileStore) Append(line []byte) error {
	if !s.placed {
		if len(s.torn) > 0 {
			if err := s.f.Truncate(s.end); err != nil {
				return fmt.Errorf("cut the torn line of %s: %w", s.path, err)
			}
			s.torn = nil
		}
		if _, err := s.f.Seek(s.end, io.SeekStart); err != nil {
			return err
		}
		s.placed = true
	}
	if _, err := s.w.Write(line); err != nil {
		return err
	}
	return s.w.WriteByte('\n')
}

func (s *fileStore) Flush() error {
	if err := s.background(); err != nil {
		return err
	}
	return s.w.Flush()
}

// Sync writes the buffered lines and waits until the file is on disk.
func (s *fileStore) Sync() error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	s.settle()
	return errors.Join(s.background(), s.f.Sync())
}

// Reset empties the file: a journal that never began starts over.
func (s *fileStore) Reset() error {
	s.settle()
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	s.end, s.torn, s.placed = 0, nil, false
	return nil
}

func (s *fileStore) Close() error {
	s.settle()
	ferr := errors.Join(s.background(), s.w.Flush())
	cerr := s.f.Close() // releases the lock
	return errors.Join(ferr, cerr)
}

// lineReader reads newline-terminated lines without allocating per line.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

// next returns the next line with its newline, valid until the next call;
// a last line without a newline comes with io.EOF.
func (lr *lineReader) next() ([]byte, error) {
	line, err := lr.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	lr.buf = append(lr.buf[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(lr.buf) > journal.MaxLine {
			return lr.buf, errLineTooLong
		}
		line, err = lr.r.ReadSlice('\n')
		lr.buf = append(lr.buf, line...)
	}
	return lr.buf, err
}

var errLineTooLong = fmt.Errorf("longer than %d bytes", journal.MaxLine)
