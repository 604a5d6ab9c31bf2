package maker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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
	// ErrJournalUsed: a Journal serves one Solve; open the file again with
	// OpenJournal to resume.
	ErrJournalUsed = errors.New("journal already used by a Solve; open it again with OpenJournal")
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
	Observation       *intent.Observation `json:"observation,omitempty"`
	ObservationDigest string              `json:"observation_sha256,omitempty"`
}

// pendingRecord marks a side-effect tool call about to run.
type pendingRecord struct {
	Pending int                `json:"pending_step"`
	Intent  *intent.ToolIntent `json:"tool_intent"`
}

// Journal is an append-only record of a run: a header with the task's
// fingerprint and the settings, then one JSON line per decided step. Each
// step's line is written to the file before the next step starts, so a
// killed process loses nothing already decided; the file is synced to disk
// in batches of SyncEvery steps, always before a side-effect tool runs, and
// when the run ends (a power loss may cost the unsynced steps, which a
// resumed run decides again). A Journal serves one Solve call.
type Journal struct {
	f      *os.File
	w      *bufio.Writer
	path   string
	header *journalHeader
	// body and end delimit the step lines to replay: bytes [body, end)
	// of the file, every one a whole JSON line.
	body, end int64
	used      bool
	unsynced  int
	// SyncEvery is how many steps are written between syncs to disk; 0
	// means 64.
	SyncEvery int
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
			if j.header == nil {
				// Nothing but a torn header at most: an empty file, or the
				// start of a header line, is a journal that never began.
				if len(line) > 0 && !bytes.HasPrefix([]byte(`{"mdap_journal":`), line) && !bytes.HasPrefix(line, []byte(`{"mdap_journal":`)) {
					return fmt.Errorf("%w: %s is not a journal (no header line); name a journal written by --journal", ErrJournalCorrupt, j.path)
				}
			}
			break // a line without its newline is a torn write: dropped
		}
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
		body := bytes.TrimSpace(line)
		if j.header == nil {
			var h journalHeader
			if json.Unmarshal(body, &h) != nil || h.Version == 0 {
				return fmt.Errorf("%w: %s is not a journal (line 1 is not a journal header); name a journal written by --journal", ErrJournalCorrupt, j.path)
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
	// The torn tail, if any, is cut only once Solve has checked that the
	// journal belongs to its run (see begin): a refused resume changes
	// nothing.
	j.end = good
	return nil
}

func isLast(r *bufio.Reader) bool {
	_, err := r.Peek(1)
	return err == io.EOF
}

// settingsDiff names the settings whose values differ, as "k: 3 in the
// journal, 5 now".
func settingsDiff(was, now string) string {
	fields := func(s string) (map[string]string, []string) {
		m := map[string]string{}
		var order []string
		for _, f := range strings.Fields(s) {
			k, v, _ := strings.Cut(f, "=")
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] = v
		}
		return m, order
	}
	a, order := fields(was)
	b, orderB := fields(now)
	for _, k := range orderB {
		if _, ok := a[k]; !ok {
			order = append(order, k)
		}
	}
	var diffs []string
	for _, k := range order {
		if a[k] != b[k] {
			diffs = append(diffs, fmt.Sprintf("%s: %q in the journal, %q now", k, a[k], b[k]))
		}
	}
	if len(diffs) == 0 {
		return fmt.Sprintf("%q in the journal, %q now", was, now)
	}
	return strings.Join(diffs, "; ")
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
	if j.used {
		return fmt.Errorf("%w: %s", ErrJournalUsed, j.path)
	}
	j.used = true
	if j.header != nil {
		if j.header.Fingerprint != fingerprint {
			return fmt.Errorf("%w: %s was written for task %q, not %q; give the same task, or another journal file",
				ErrJournalMismatch, j.path, j.header.Fingerprint, fingerprint)
		}
		if j.header.Settings != settings {
			return fmt.Errorf("%w: %s was written with other settings (%s); resume with the settings of the first run, or use another journal file",
				ErrJournalMismatch, j.path, settingsDiff(j.header.Settings, settings))
		}
		// The journal is this run's: cut a torn last line, append after it.
		if err := j.f.Truncate(j.end); err != nil {
			return fmt.Errorf("cut torn journal line: %w", err)
		}
		_, err := j.f.Seek(j.end, io.SeekStart)
		return err
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
	if err := j.Flush(); err != nil {
		return err
	}
	j.unsynced++
	every := j.SyncEvery
	if every <= 0 {
		every = 64
	}
	if j.unsynced >= every {
		return j.sync()
	}
	return nil
}

func (j *Journal) sync() error {
	j.unsynced = 0
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal sync: %w", err)
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
	return j.sync()
}

// Flush writes buffered lines to the file.
func (j *Journal) Flush() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("journal flush: %w", err)
	}
	return nil
}

// Close flushes, syncs and closes the journal.
func (j *Journal) Close() error {
	ferr := j.Flush()
	serr := j.f.Sync()
	cerr := j.f.Close()
	return errors.Join(ferr, serr, cerr)
}
