package maker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
)

// Journal errors, for errors.Is.
var (
	// ErrJournalExists: CreateJournal would overwrite a journal; resume it
	// or remove it.
	ErrJournalExists = errors.New("journal already exists")
	// ErrJournalMismatch: the journal was written for another task or
	// other settings.
	ErrJournalMismatch = errors.New("journal belongs to another run")
	// ErrJournalCorrupt: a line before the last does not parse.
	ErrJournalCorrupt = errors.New("journal is corrupt")
	// ErrPendingSideEffect: the journal ends with a side-effect tool call
	// that was about to run and may or may not have run. It is never re-run
	// silently; see Solver.RerunPending.
	ErrPendingSideEffect = errors.New("side-effect tool call may have run before the crash")
)

const journalVersion = 1

// journalHeader is the first line of a journal.
type journalHeader struct {
	Version     int    `json:"mdap_journal"`
	Fingerprint string `json:"task"`
	Settings    string `json:"settings"`
}

// StepRecord is one decided step as the journal keeps it, one JSON line.
type StepRecord struct {
	Step int `json:"step"`
	// Winner is the winning answer; Key its vote key in hex.
	Winner intent.Output `json:"winner"`
	Key    string        `json:"key"`
	// Votes are the valid votes per key (hex) at the moment of decision.
	Votes map[string]int `json:"votes"`
	Counts
	Flags map[string]int `json:"flags,omitempty"`
	Usage Usage          `json:"usage"`
	// Observation is the result of the winner's tool intent, if it had
	// one; the next step's prompt needs it on resume. ObservationDigest is
	// its SHA-256, for audits that keep only digests.
	Observation       *executor.Observation `json:"observation,omitempty"`
	ObservationDigest string                `json:"observation_sha256,omitempty"`
}

// pendingRecord marks a side-effect tool call about to run.
type pendingRecord struct {
	Pending int                `json:"pending_step"`
	Intent  *intent.ToolIntent `json:"tool_intent"`
}

// Journal is an append-only record of a run: a header with the task's
// fingerprint and the settings, then one JSON line per decided step. Lines
// are buffered and flushed every FlushEvery steps, before any side-effect
// tool runs, and when the run ends; a crash loses at most the unflushed
// steps, which a resumed run decides again (deterministically, with the
// simulated model). A Journal is used by one Solver at a time.
type Journal struct {
	f      *os.File
	w      *bufio.Writer
	path   string
	header *journalHeader
	// body and end delimit the step lines to replay: bytes [body, end)
	// of the file, every one a whole JSON line.
	body, end int64
	unsynced  int
	// FlushEvery is how many step lines are buffered before a flush; 0
	// means 64.
	FlushEvery int
}

// CreateJournal creates a new journal at path. It refuses, wrapping
// ErrJournalExists, to overwrite a file that exists: no run's record is
// ever lost to a typo.
func CreateJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%w: %s (resume it, or remove it to start over)", ErrJournalExists, path)
	}
	if err != nil {
		return nil, fmt.Errorf("create journal: %w", err)
	}
	return &Journal{f: f, w: bufio.NewWriter(f), path: path}, nil
}

// OpenJournal opens an existing journal to resume its run. A torn last line
// (a crash mid-write) is dropped and cut from the file; a bad line anywhere
// else is an error wrapping ErrJournalCorrupt. The records are replayed by
// Solver.Solve, which also checks the header against the task. Cost: one
// pass over the file here and one in Solve, in constant memory: no line is
// kept.
func OpenJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	j := &Journal{f: f, path: path}
	if err := j.load(); err != nil {
		f.Close()
		return nil, err
	}
	j.w = bufio.NewWriter(f)
	return j, nil
}

func (j *Journal) load() error {
	r := bufio.NewReaderSize(j.f, 1<<16)
	var offset, good int64
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadBytes('\n')
		offset += int64(len(line))
		if err == io.EOF {
			// No newline at the end: a torn write. Drop it.
			break
		}
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
		body := bytes.TrimSpace(line)
		if j.header == nil {
			var h journalHeader
			if json.Unmarshal(body, &h) != nil || h.Version == 0 {
				if isLast(r) {
					break
				}
				return fmt.Errorf("%w: %s:1 is not a journal header", ErrJournalCorrupt, j.path)
			}
			j.header = &h
			j.body = offset
		} else if !json.Valid(body) {
			if isLast(r) {
				break
			}
			return fmt.Errorf("%w: %s:%d does not parse", ErrJournalCorrupt, j.path, lineNo)
		}
		good = offset
	}
	j.end = good
	if err := j.f.Truncate(good); err != nil {
		return fmt.Errorf("cut torn journal line: %w", err)
	}
	_, err := j.f.Seek(good, io.SeekStart)
	return err
}

func isLast(r *bufio.Reader) bool {
	_, err := r.Peek(1)
	return err == io.EOF
}

// records calls fn with each step or pending line to replay, in order, and
// then forgets them: a second call sees none.
func (j *Journal) records(fn func(line []byte) error) error {
	if j.end <= j.body {
		return nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(j.f, j.body, j.end-j.body), 1<<16)
	j.body = j.end
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
	}
}

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

func (j *Journal) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	b = append(b, '\n')
	if _, err := j.w.Write(b); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

func (j *Journal) begin(fingerprint, settings string) error {
	if j.header != nil {
		if j.header.Fingerprint != fingerprint || j.header.Settings != settings {
			return fmt.Errorf("%w: %s was written for task %q with settings %s, not task %q with settings %s; use another journal file",
				ErrJournalMismatch, j.path, j.header.Fingerprint, j.header.Settings, fingerprint, settings)
		}
		return nil
	}
	j.header = &journalHeader{Version: journalVersion, Fingerprint: fingerprint, Settings: settings}
	if err := j.writeLine(j.header); err != nil {
		return err
	}
	return j.Flush()
}

func (j *Journal) step(rec *StepRecord) error {
	if err := j.writeLine(rec); err != nil {
		return err
	}
	j.unsynced++
	every := j.FlushEvery
	if every <= 0 {
		every = 64
	}
	if j.unsynced >= every {
		return j.Flush()
	}
	return nil
}

// pending records a side-effect call and makes it durable before it runs.
func (j *Journal) pending(step int, ti *intent.ToolIntent) error {
	if err := j.writeLine(pendingRecord{Pending: step, Intent: ti}); err != nil {
		return err
	}
	if err := j.Flush(); err != nil {
		return err
	}
	return j.f.Sync()
}

// Flush writes buffered lines to the file.
func (j *Journal) Flush() error {
	j.unsynced = 0
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("journal flush: %w", err)
	}
	return nil
}

// Close flushes and closes the journal.
func (j *Journal) Close() error {
	ferr := j.Flush()
	cerr := j.f.Close()
	return errors.Join(ferr, cerr)
}
