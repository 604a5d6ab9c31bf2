package maker

import (
	"bufio"
	"io"
	"os"
)

// Hooks for BenchmarkJournalInSitu (journalinsitu_bench_test.go), which
// splits the journal's cost inside a running solve into its parts.

// DiagChain is an unkeyed hash chain.
type DiagChain struct{ c *chain }

func NewDiagChain() *DiagChain               { return &DiagChain{newChain(nil)} }
func (d *DiagChain) Seal(line []byte) []byte { return d.c.seal(line) }

// DiagCreateJournal is CreateJournal with a write buffer of size bytes.
func DiagCreateJournal(path string, size int) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return NewJournalKey(&fileStore{f: f, w: bufio.NewWriterSize(f, size), path: path}, nil)
}

// diagNull is a store that keeps nothing and copies what it is given (as
// the file store does into its buffer), so the journal reuses its line
// buffer: encoding and chaining without I/O or allocation.
type diagNull struct{}

func (diagNull) Name() string                             { return "null" }
func (diagNull) Lines(int, func(int, []byte) error) error { return nil }
func (diagNull) Torn() []byte                             { return nil }
func (diagNull) Append([]byte) error                      { return nil }
func (diagNull) Flush() error                             { return nil }
func (diagNull) Sync() error                              { return nil }
func (diagNull) Reset() error                             { return nil }
func (diagNull) Close() error                             { return nil }
func DiagNullJournal() (*Journal, error)                  { return NewJournalKey(diagNull{}, nil) }

// diagNoSync is the file store without any fsync.
type diagNoSync struct{ *fileStore }

func (s diagNoSync) Sync() error           { return s.w.Flush() }
func (s diagNoSync) SyncBackground() error { return s.w.Flush() }

// DiagCreateJournalNoSync is CreateJournal whose store never syncs.
func DiagCreateJournalNoSync(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return NewJournalKey(diagNoSync{&fileStore{f: f, w: bufio.NewWriterSize(f, fileBuffer), path: path}}, nil)
}

// DiagCreateJournalDiscard is CreateJournal whose buffer is written to
// io.Discard: the buffer's copy without the write(2).
func DiagCreateJournalDiscard(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return NewJournalKey(&fileStore{f: f, w: bufio.NewWriterSize(io.Discard, fileBuffer), path: path}, nil)
}
