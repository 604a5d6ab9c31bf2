package decompose

import (
	"bytes"
	"io"
	"os"

	mjournal "github.com/mdap-go/mdap/maker/journal"
)

// lineStore is where a decision journal keeps its lines: its file
// (fileLines), or a journal.Store of the caller's, such as a task's
// journal on the NATS engine (storeLines). The journal uses it from one
// goroutine at a time, under its lock.
type lineStore interface {
	// name names the store in messages, as a file's path does.
	name() string
	// read returns every stored line, each ending in a newline, and a
	// torn tail after the last whole line if the store keeps one.
	read() ([]byte, error)
	// cut drops what read returned after its first whole bytes (a torn
	// tail), before the first append.
	cut(whole int64) error
	// append stores line (ending in a newline) after the last, durably
	// (written and synced) before it returns.
	append(line []byte) error
	// close releases the store and its lock.
	close() error
}

// fileLines is a journal file, locked (flock) by openJournal.
type fileLines struct {
	f    *os.File
	path string
}

func (s *fileLines) name() string          { return s.path }
func (s *fileLines) read() ([]byte, error) { return io.ReadAll(s.f) }
func (s *fileLines) close() error          { return s.f.Close() }

func (s *fileLines) cut(whole int64) error {
	if err := s.f.Truncate(whole); err != nil {
		return err
	}
	_, err := s.f.Seek(whole, io.SeekStart)
	return err
}

func (s *fileLines) append(line []byte) error {
	if _, err := s.f.Write(line); err != nil {
		return err
	}
	return s.f.Sync()
}

// storeLines is a journal.Store holding a decision journal's lines
// (Config.JournalStore): its exclusion is the store's (the engine's
// lease), a line is kept when Sync returns, and a torn tail is the
// store's to discard on the first Append.
type storeLines struct{ s mjournal.Store }

func (s storeLines) name() string { return s.s.Name() }
func (s storeLines) close() error { return s.s.Close() }

func (s storeLines) read() ([]byte, error) {
	var all []byte
	err := s.s.Lines(0, func(_ int, line []byte) error {
		all = append(append(all, line...), '\n')
		return nil
	})
	return all, err
}

func (s storeLines) cut(int64) error { return nil }

func (s storeLines) append(line []byte) error {
	if err := s.s.Append(bytes.TrimSuffix(line, []byte("\n"))); err != nil {
		return err
	}
	return s.s.Sync()
}
