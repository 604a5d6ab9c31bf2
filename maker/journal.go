package maker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/mdap-go/mdap/intent"
)

// Journal errors, for errors.Is.
var (
	// ErrJournalExists: CreateJournal would overwrite a file; resume the
	// journal or remove it.
	ErrJournalExists = errors.New("journal already exists")
	// ErrJournalPath: the journal's path is not a regular file (a folder,
	// a FIFO, a device such as /dev/null), or cannot be opened for
	// reading and writing.
	ErrJournalPath = errors.New("journal path is not a writable regular file")
	// ErrJournalLocked: another process (or another Journal in this one)
	// holds the journal open; two runs never write one journal.
	ErrJournalLocked = errors.New("journal is in use by another run")
	// ErrJournalMismatch: the journal was written for another task or
	// other settings.
	ErrJournalMismatch = errors.New("journal belongs to another run")
	// ErrJournalVersion: the journal was written in another format
	// version than this build reads.
	ErrJournalVersion = errors.New("journal version not supported")
	// ErrJournalCorrupt: a line other than a torn last one is not what
	// the journal wrote: it does not parse, is not a record, breaks the
	// order of steps, or a checkpoint's checksum does not match the lines
	// before it.
	ErrJournalCorrupt = errors.New("journal is corrupt")
	// ErrPendingSideEffect: the journal ends with a side-effect tool call
	// that was about to run and may or may not have run. It is never re-run
	// silently; see Solver.RerunPending.
	ErrPendingSideEffect = errors.New("side-effect tool call may have run before the crash")
	// ErrJournalUsed: a Journal serves one Solve; open the file again with
	// OpenJournal to resume.
	ErrJournalUsed = errors.New("journal already used by a Solve; open it again with OpenJournal")
)

// JournalVersion is the version of the journal format this build writes
// and reads. A journal of another version is refused with
// ErrJournalVersion.
const JournalVersion = 2

// Defaults of a Journal's tuning fields.
const (
	DefaultSyncEvery       = 64
	DefaultCheckpointEvery = 4096
)

// MaxJournalLine is the longest journal line read back, in bytes; a longer
// line is corruption. A step record holds at most one capped observation,
// so real lines stay far below it.
const MaxJournalLine = 16 << 20

// journalHeader is the first line of a journal.
type journalHeader struct {
	Version     int      `json:"mdap_journal"`
	Fingerprint string   `json:"task"`
	Settings    Settings `json:"settings"`
}

// StepRecord is one decided step as the journal keeps it, one JSON line.
type StepRecord struct {
	Step int `json:"step"`
	// Pending marks the record written, and synced, before a side-effect
	// tool call runs: the step is decided, its call may or may not have
	// run. The step's complete record follows once the call returned.
	Pending bool `json:"pending,omitempty"`
	// K is the margin the step was decided with.
	K int `json:"k"`
	// Winner is the winning answer; Key its vote key in hex.
	Winner intent.Output `json:"winner"`
	Key    string        `json:"key"`
	// Votes are the valid votes per key (hex) at the moment of decision.
	Votes map[string]int `json:"votes"`
	Counts
	Flags map[string]int `json:"flags,omitempty"`
	Usage Usage          `json:"usage"`
	// Models is each ensemble member's share of the step, in member
	// order; empty for a single model.
	Models []ModelStep `json:"models,omitempty"`
	// Elapsed is the time the step took, from its prompt to its record.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Observation is the result of the winner's tool intent, if it had
	// one; the next step's prompt needs it on resume. ObservationDigest is
	// its SHA-256, for audits that keep only digests.
	Observation       *intent.Observation `json:"observation,omitempty"`
	ObservationDigest string              `json:"observation_sha256,omitempty"`
}

// checkpointRecord saves a task's state and the run's totals, so that a
// resume restores them instead of replaying every step before it. CRC is
// the CRC-32C of every byte of the journal before the checkpoint's line,
// so a changed line anywhere before it is found.
type checkpointRecord struct {
	Next  int                 `json:"checkpoint"`
	CRC   uint32              `json:"crc32c"`
	State json.RawMessage     `json:"task_state"`
	Last  *intent.Observation `json:"last_observation,omitempty"`
	Total Report              `json:"report"`
}

var (
	stepPrefix       = []byte(`{"step":`)
	checkpointPrefix = []byte(`{"checkpoint":`)
	headerPrefix     = []byte(`{"mdap_journal":`)
	crcTable         = crc32.MakeTable(crc32.Castagnoli)
)

// Journal is an append-only record of a run: a header with the task's
// fingerprint and the Settings, then one JSON line per decided step and,
// for tasks that implement Snapshotter, a checkpoint every
// CheckpointEvery steps.
//
// Durability: each step's line is written to the file before the next
// step starts, so a killed process loses nothing already decided; the
// file is synced to disk every SyncEvery steps, always before a
// side-effect tool runs, and when the run ends (a power loss may cost the
// unsynced steps, which a resumed run decides again). A write that fails
// fails the run before the next step, and never after a side effect the
// journal could not record.
//
// Exclusion: a Journal holds an advisory lock (flock) on its file from
// CreateJournal or OpenJournal until Close; a second Journal on the same
// file, in this process or another, fails with ErrJournalLocked.
//
// A Journal serves one Solve call.
type Journal struct {
	f    *os.File
	w    *bufio.Writer
	path string
	crc  uint32 // CRC-32C of every byte before the write position

	header *journalHeader
	// The lines to replay are bytes [replay, end) of the file, starting
	// at line number replayLine; every one ends with a newline.
	replay, end int64
	replayLine  int
	checkpoint  *checkpointRecord // the last one, if any
	bodyLine    int               // line number of the first body line
	body        int64             // offset of the first body line
	torn        int               // bytes of a torn last line, dropped

	used       bool
	unsynced   int
	sinceCheck int

	// SyncEvery is how many steps are written between syncs to disk;
	// 0 means DefaultSyncEvery.
	SyncEvery int
	// CheckpointEvery is how many steps are written between checkpoints,
	// for tasks that implement Snapshotter; 0 means
	// DefaultCheckpointEvery, a negative value none.
	CheckpointEvery int
}

// CreateJournal creates a new journal at path and locks it. It refuses,
// wrapping ErrJournalExists, to overwrite anything that exists: no run's
// record is ever lost to a typo. Errors: ErrJournalExists, ErrJournalPath
// (the folder does not exist or is not writable), ErrJournalLocked.
func CreateJournal(path string) (*Journal, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: the path is empty", ErrJournalPath)
	}
	if fi, err := os.Lstat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: %s is %s", ErrJournalPath, path, fileKind(fi.Mode()))
		}
		return nil, fmt.Errorf("%w: %s (resume it, or remove it to start over)", ErrJournalExists, path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %s (resume it, or remove it to start over)", ErrJournalExists, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJournalPath, err)
	}
	if err := lock(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return &Journal{f: f, w: bufio.NewWriterSize(f, 1<<16), path: path}, nil
}

// OpenJournal opens an existing journal to resume its run, and locks it.
// It reads the whole file once, computing checksums but decoding only the
// header and the checkpoints; Solve then decodes and replays the steps
// after the last checkpoint (or all of them, for a task that is not a
// Snapshotter). Memory stays constant: no line is kept.
//
// What it accepts: a whole journal; one whose last line was torn by a
// crash (the line has no newline: it is dropped when Solve appends, see
// TornBytes); a file holding nothing but a torn header, or nothing at all
// (a run that never began: Solve starts it over). What it refuses, and
// leaves untouched: ErrJournalPath for a path that is not a writable
// regular file; ErrJournalLocked; ErrJournalVersion; ErrJournalCorrupt,
// naming the line, for a file that is not a journal, a whole line that is
// not a journal record, a line over MaxJournalLine, or a checkpoint whose
// checksum does not match the lines before it (a line was changed).
func OpenJournal(path string) (*Journal, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: the path is empty", ErrJournalPath)
	}
	// O_NONBLOCK: a FIFO must be refused, not waited on.
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist (start a run with it first)", ErrJournalPath, path)
		}
		return nil, fmt.Errorf("%w: %w", ErrJournalPath, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is %s", ErrJournalPath, path, fileKind(fi.Mode()))
	}
	if err == nil {
		err = lock(f, path)
	}
	if err == nil {
		j := &Journal{f: f, path: path}
		if err = j.load(); err == nil {
			j.w = bufio.NewWriterSize(f, 1<<16)
			return j, nil
		}
	}
	f.Close()
	return nil, err
}

func lock(f *os.File, path string) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s is locked by another process; wait for it to end, or use another journal file", ErrJournalLocked, path)
		}
		return fmt.Errorf("%w: lock %s: %w", ErrJournalPath, path, err)
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
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
		if len(lr.buf) > MaxJournalLine {
			return lr.buf, errLineTooLong
		}
		line, err = lr.r.ReadSlice('\n')
		lr.buf = append(lr.buf, line...)
	}
	return lr.buf, err
}

var errLineTooLong = fmt.Errorf("longer than %d bytes", MaxJournalLine)

func (j *Journal) corrupt(line int, format string, a ...any) error {
	return fmt.Errorf("%w: %s:%d %s; a journal is only ever appended to by mdap: restore it from a copy, or start a new run with another file",
		ErrJournalCorrupt, j.path, line, fmt.Sprintf(format, a...))
}

func (j *Journal) load() error {
	lr := &lineReader{r: bufio.NewReaderSize(j.f, 1<<16)}
	var off int64
	var crc uint32
	for n := 1; ; n++ {
		line, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			return j.corrupt(n, "is %v", err)
		}
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				if j.header == nil && !bytes.HasPrefix(headerPrefix, line) && !bytes.HasPrefix(line, headerPrefix) {
					return fmt.Errorf("%w: %s is not a journal (no header line); name a journal written by --journal", ErrJournalCorrupt, j.path)
				}
				j.torn = len(line) // a write cut short: dropped on append
			}
			break
		}
		if err != nil {
			return fmt.Errorf("read journal %s: %w", j.path, err)
		}
		if j.header == nil {
			var h journalHeader
			if !bytes.HasPrefix(line, headerPrefix) || json.Unmarshal(line, &h) != nil || h.Version == 0 {
				return fmt.Errorf("%w: %s is not a journal (line 1 is not a journal header); name a journal written by --journal", ErrJournalCorrupt, j.path)
			}
			if h.Version != JournalVersion {
				return fmt.Errorf("%w: %s is journal version %d, this build reads version %d; finish it with the build that wrote it",
					ErrJournalVersion, j.path, h.Version, JournalVersion)
			}
			j.header = &h
			j.body, j.bodyLine = off+int64(len(line)), n+1
			j.replay, j.replayLine = j.body, j.bodyLine
		} else {
			switch {
			case bytes.HasPrefix(line, checkpointPrefix):
				var c checkpointRecord
				if err := json.Unmarshal(line, &c); err != nil {
					return j.corrupt(n, "is a checkpoint that does not parse: %v", err)
				}
				if c.CRC != crc {
					return j.corrupt(n, "is a checkpoint whose checksum does not match the lines before it: a line before it was changed")
				}
				j.checkpoint = &c
				j.replay, j.replayLine = off+int64(len(line)), n+1
			case bytes.HasPrefix(line, stepPrefix):
				// Decoded when replayed (after the last checkpoint) or
				// covered by the next checkpoint's checksum (before it).
			default:
				return j.corrupt(n, "is not a journal record")
			}
		}
		crc = crc32.Update(crc, crcTable, line)
		off += int64(len(line))
	}
	j.end, j.crc = off, crc
	return nil
}

// TornBytes returns the size of the torn last line OpenJournal found (a
// write cut short by a crash), which is dropped when the run resumes; 0
// when there was none.
func (j *Journal) TornBytes() int { return j.torn }

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

// records calls fn with each line to replay, in order, with its line
// number, and then forgets them: a second call sees none.
func (j *Journal) records(fn func(n int, line []byte) error) error {
	if j.end <= j.replay {
		return nil
	}
	lr := &lineReader{r: bufio.NewReaderSize(io.NewSectionReader(j.f, j.replay, j.end-j.replay), 1<<16)}
	n := j.replayLine
	j.replay = j.end
	for ; ; n++ {
		line, err := lr.next()
		if len(line) > 0 && !bytes.HasPrefix(line, checkpointPrefix) {
			if ferr := fn(n, line); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read journal %s: %w", j.path, err)
		}
	}
}

// fromStart makes the replay start at the first body line, ignoring
// checkpoints: for a task that cannot restore one.
func (j *Journal) fromStart() {
	j.replay, j.replayLine, j.checkpoint = j.body, j.bodyLine, nil
}

func (j *Journal) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	b = append(b, '\n')
	if _, err := j.w.Write(b); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.crc = crc32.Update(j.crc, crcTable, b)
	return nil
}

// check refuses a journal of another task or other settings, and a second
// use. It changes nothing.
func (j *Journal) check(fingerprint string, settings Settings) error {
	if j.used {
		return fmt.Errorf("%w: %s", ErrJournalUsed, j.path)
	}
	j.used = true
	if j.header == nil {
		return nil
	}
	if j.header.Fingerprint != fingerprint {
		return fmt.Errorf("%w: %s was written for task %q, not %q; give the same task, or another journal file",
			ErrJournalMismatch, j.path, j.header.Fingerprint, fingerprint)
	}
	if diff := j.header.Settings.Diff(settings); len(diff) > 0 {
		return fmt.Errorf("%w: %s was written with other settings (%s); resume with the settings of the first run, or use another journal file",
			ErrJournalMismatch, j.path, joinDiff(diff))
	}
	return nil
}

func joinDiff(d []string) string {
	var b bytes.Buffer
	for i, s := range d {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// begin makes the journal ready to append, once the replay found it sound:
// a torn last line is cut, and a journal that never began (no whole
// header) is started over with a header.
func (j *Journal) begin(fingerprint string, settings Settings) error {
	if j.header != nil {
		if err := j.f.Truncate(j.end); err != nil {
			return fmt.Errorf("journal %s: cut torn line: %w", j.path, err)
		}
		_, err := j.f.Seek(j.end, io.SeekStart)
		return err
	}
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if _, err := j.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	j.crc = 0
	j.header = &journalHeader{Version: JournalVersion, Fingerprint: fingerprint, Settings: settings}
	if err := j.writeLine(j.header); err != nil {
		return err
	}
	return j.Flush()
}

// step writes a decided step's record to the file.
func (j *Journal) step(rec *StepRecord) error {
	if err := j.writeLine(rec); err != nil {
		return err
	}
	if err := j.Flush(); err != nil {
		return err
	}
	j.sinceCheck++
	j.unsynced++
	if j.unsynced >= cmpOr(j.SyncEvery, DefaultSyncEvery) {
		return j.sync()
	}
	return nil
}

// dueCheckpoint reports whether a checkpoint is due after this step.
func (j *Journal) dueCheckpoint() bool {
	every := cmpOr(j.CheckpointEvery, DefaultCheckpointEvery)
	return every > 0 && j.sinceCheck >= every
}

// writeCheckpoint saves the task's state and the totals.
func (j *Journal) writeCheckpoint(next int, state json.RawMessage, last *intent.Observation, total Report) error {
	j.sinceCheck = 0
	total.Resumed, total.Wall = 0, 0
	if err := j.writeLine(checkpointRecord{Next: next, CRC: j.crc, State: state, Last: last, Total: total}); err != nil {
		return err
	}
	return j.Flush()
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func (j *Journal) sync() error {
	j.unsynced = 0
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: sync: %w", j.path, err)
	}
	return nil
}

// pending records a decided step whose side-effect call is about to run,
// and makes it durable before it runs.
func (j *Journal) pending(rec StepRecord) error {
	rec.Pending = true
	rec.Observation, rec.ObservationDigest = nil, ""
	if err := j.writeLine(rec); err != nil {
		return err
	}
	if err := j.Flush(); err != nil {
		return err
	}
	return j.sync()
}

// Flush writes buffered lines to the file.
func (j *Journal) Flush() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// Close flushes, syncs, unlocks and closes the journal. It is safe to call
// more than once.
func (j *Journal) Close() error {
	if j.f == nil {
		return nil
	}
	ferr := j.Flush()
	serr := j.f.Sync()
	cerr := j.f.Close() // releases the lock
	j.f = nil
	return errors.Join(ferr, serr, cerr)
}
