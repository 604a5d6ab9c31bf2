// Package journal is a run's record: a header naming the task, its
// version, the settings and the rules that decided it, then one JSON line
// per decided step and a checkpoint now and then, each line hash-chained
// and signed by default, the chain head kept in the state folder. The
// step loop (package maker) writes it and replays it through the API
// below; the journal knows nothing of the step loop.
package journal

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
)

// Journal errors, for errors.Is.
var (
	// ErrExists: a new journal would overwrite a file (maker/journalfile);
	// resume the journal or remove it.
	ErrExists = errors.New("journal already exists")
	// ErrPath: a file journal's path is not a regular file (a folder,
	// a FIFO, a device such as /dev/null), or cannot be opened for
	// reading and writing.
	ErrPath = errors.New("journal path is not a writable regular file")
	// ErrLocked: another process (or another Journal in this one)
	// holds the journal open; two runs never write one journal.
	ErrLocked = errors.New("journal is in use by another run")
	// ErrMismatch: the journal was written for another task or
	// other settings.
	ErrMismatch = errors.New("journal belongs to another run")
	// ErrVersion: the journal was written in another format
	// version than this build reads (version 2, from before the hash
	// chain, included: finish it with the build that wrote it).
	ErrVersion = errors.New("journal version not supported")
	// ErrCorrupt: a line other than a torn last one is not what
	// the journal wrote: it does not parse, is not a record, breaks the
	// order of steps, or does not match the journal's hash chain (a line
	// was changed, dropped, added or moved; see KeyEnv).
	ErrCorrupt = errors.New("journal is corrupt")
	// ErrUsed: a Journal serves one Solve; open its store again to
	// resume.
	ErrUsed = errors.New("journal already used by a Solve; open it again to resume")
)

// Version is the version of the journal format this build writes.
// It reads it and versions 3 and 4; a journal of another version is
// refused with ErrVersion, with a message that says whether a newer or an
// older build wrote it. Version 3 added the hash chain (chain.go), version
// 4 signing by default, a random run id in the header and a chain head
// kept outside the journal (state.go), version 5 each step's samples
// (StepRecord.Samples) and the ensemble's members in the header. A
// version 2 journal is refused, not migrated: an unchained journal cannot
// prove it was not edited, so chaining it now would vouch for whatever it
// holds. A version 3 or 4 journal goes on in its own version (its new
// steps without samples), so the build that began it can still finish
// it: a version 3 one written with KeyEnv's key resumes with that key
// set; one written without a key (version 3's default) only with
// Unsigned, as it may have been rewritten by anyone.
const Version = 5

// journalVersion3 is the oldest format read: no run id, no chain head,
// unkeyed unless KeyEnv was set. journalVersion4 added those, and
// kept no samples.
const (
	journalVersion3 = 3
	journalVersion4 = 4
)

// Defaults of a Journal's tuning fields.
const (
	// DefaultSyncEvery is Journal.SyncEvery's default. The kernel's cost
	// of a write(2) to a file is mostly per byte, and less per byte in
	// larger writes, so a few hundred steps a write cost less CPU than 64
	// (docs/speed.md has the measurements; Journal's Durability what a
	// crash loses).
	DefaultSyncEvery       = 256
	DefaultCheckpointEvery = 4096
	// DefaultWriteEvery is Journal.WriteEvery's default.
	DefaultWriteEvery = time.Second
	// DefaultSyncPeriod is Journal.SyncPeriod's default.
	DefaultSyncPeriod = time.Second
)

// MaxLine is the longest journal line read back, in bytes; a longer
// line is corruption. A step record holds at most one capped observation,
// so real lines stay far below it.
const MaxLine = 16 << 20

// Header is the first line of a journal: what run it records.
type Header struct {
	Version int `json:"mdap_journal"`
	// Run is the journal's random run id (32 hex digits, from version
	// 4): two journals never share one, and the chain head kept in the
	// state folder is filed under it.
	Run string `json:"run,omitempty"`
	// Mdap is the version of mdap that began the journal (for people:
	// Decisions is what a resume compares), Decisions its
	// DecisionVersion, TaskVersion the task's own (TaskVersioner); from
	// version 4.
	Mdap        string `json:"mdap,omitempty"`
	Decisions   int    `json:"decisions,omitempty"`
	TaskVersion string `json:"task_version,omitempty"`
	Fingerprint string `json:"task"`
	// Settings are the run's maker.Settings, as JSON: the step loop
	// compares them on resume.
	Settings json.RawMessage `json:"settings"`
	// Keyed is true when the chain is an HMAC (signed: the state
	// folder's key or KeyEnv's).
	Keyed bool `json:"keyed,omitempty"`
	// Members are the identities of an ensemble's members, in order (from
	// version 5; empty for a single model): SampleRecord's model.
	Members []string `json:"members,omitempty"`
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
	vote.Counts
	Flags map[string]int `json:"flags,omitempty"`
	Usage vote.Usage     `json:"usage"`
	// Models is each ensemble member's share of the step, in member
	// order; empty for a single model.
	Models []ModelStep `json:"models,omitempty"`
	// Correct is the step's valid votes for its correct answer, when the
	// task is a Checker that knew it and the run uses adaptive k.
	Correct *int `json:"correct,omitempty"`
	// Contested marks a step whose first race ran past the escalation
	// threshold; Escalated one then decided by the escalation policy.
	Contested bool `json:"contested,omitempty"`
	Escalated bool `json:"escalated,omitempty"`
	// Checked marks a step whose winner the task's Verifier checked.
	Checked bool `json:"checked,omitempty"`
	// Elapsed is the time the step took, from its prompt to its record.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Observation is the result of the winner's tool intent, if it had
	// one; the next step's prompt needs it on resume. ObservationDigest is
	// its SHA-256, for audits that keep only digests.
	Observation       *intent.Observation `json:"observation,omitempty"`
	ObservationDigest string              `json:"observation_sha256,omitempty"`
	// Samples are the step's samples in index order, each with the class
	// it voted for or why it did not vote, its worker and its tokens
	// (journal format version 5 on; none in a record of an earlier
	// version, or of a run with Journal.NoSamples); MoreSamples counts
	// those past MaxRecordedSamples.
	Samples     []SampleRecord `json:"samples,omitempty"`
	MoreSamples int            `json:"more_samples,omitempty"`
}

// Checkpoint saves a task's state and the run's totals, so that a
// resume restores them instead of replaying every step before it. Like
// every line it is chained to the lines before it, so a changed line
// anywhere before it, or in it, is found.
type Checkpoint struct {
	// Next is the step after the checkpoint.
	Next  int                 `json:"checkpoint"`
	State json.RawMessage     `json:"task_state"`
	Last  *intent.Observation `json:"last_observation,omitempty"`
	// Total is the run's maker.Report, as JSON.
	Total json.RawMessage `json:"report"`
}

// ModelStep is one model's share of a step, journaled for ensembles only
// (a single model's share is the step's own counts).
type ModelStep struct {
	vote.Counts
	WinnerVotes int        `json:"winner_votes"`
	Usage       vote.Usage `json:"usage"`
}

var (
	stepPrefix       = []byte(`{"step":`)
	checkpointPrefix = []byte(`{"checkpoint":`)
	headerPrefix     = []byte(`{"mdap_journal":`)
)

// Store is where a Journal keeps its lines: a file (maker/journalfile)
// or any other durable, ordered log, such as a stream of a
// message broker. A store holds whole lines; a Journal uses it from one
// goroutine at a time.
type Store interface {
	// Name names the store in messages, as a file's path does.
	Name() string
	// Lines calls fn with each whole stored line from line number from
	// (0 is the first) on, in order, without its newline; the slice is
	// valid only during the call. An error from fn stops the walk and is
	// returned.
	Lines(from int, fn func(n int, line []byte) error) error
	// Torn returns what the store holds after its last whole line, a
	// write that a crash cut short, or nil. The first Append discards it.
	Torn() []byte
	// Append adds a line, without its newline, after the last whole line.
	Append(line []byte) error
	// Flush makes the appended lines survive a crash of this process.
	Flush() error
	// Sync makes them survive a crash of the machine.
	Sync() error
	// Reset discards every line: a journal that never began starts over.
	Reset() error
	// Close releases the store and any lock it holds.
	Close() error
}

// Journal is an append-only record of a run: a header with the task's
// fingerprint and the Settings, then one JSON line per decided step and,
// for tasks that implement Snapshotter, a checkpoint every
// CheckpointEvery steps.
//
// Durability: decided steps are buffered and written to the store (for a
// file: one write(2), or one per 256 KiB of lines) every SyncEvery steps
// (DefaultSyncEvery: 256), or sooner when a step ends
// WriteEvery or more after the last write (slow steps, such as a real
// model's, are written one by one); such a write is followed by the
// periodic sync when the last one started SyncPeriod or more before (for a
// file the fsync runs in the background: the steps go on, and a failed
// fsync fails the run at a later step). The buffer is written and
// synced, waiting for the disk, before any side-effect tool call runs (its
// pending record included), written again as soon as that call's step is
// decided, and written and synced when the run ends, by success, error or
// cancellation (Solve writes it; Close syncs). A killed process therefore
// loses at most the steps not yet written (fewer than SyncEvery, or those
// of the last WriteEvery), a power loss at most those not yet synced
// (about SyncPeriod's worth); a
// resumed run decides them again, and since every sample derives from its
// SampleID it decides them identically and ends with the uninterrupted
// result. A side effect is never among the lost: it runs only once every
// step before it is on disk. A write that fails fails the run at that
// write, and never after a side effect the journal could not record.
//
// Exclusion: a store may be locked (a file journal holds flock on its
// file until Close, and a second Journal on the same file, in this
// process or another, fails with ErrLocked).
//
// A Journal serves one Solve call.
type Journal struct {
	store Store
	key   []byte // the chain's HMAC key, or nil
	chain *chain // the hash chain after the last stored line
	state string // the state folder of chain heads (see journalTrust)
	// head is the chain head recorded for this journal when it was
	// opened, checked line by line as it is read; nil once checked.
	head *chainHead
	// noHead: the state folder has no head for this signed journal;
	// refused unless the journal holds its header alone (a crash between
	// the header's sync and its head's write).
	noHead bool

	header *Header
	// The lines to replay start at line replay (0-based; every one is
	// whole); lines counts the whole lines stored.
	replay, lines int
	checkpoint    *Checkpoint // the last one, if any
	torn          int         // bytes of a torn last line, dropped

	used bool
	// broken is set by a failed write, flush or sync: what the store
	// holds is then unknown, and no chain head is recorded after it (the
	// last one recorded stays, at or before what the store holds).
	broken     bool
	closed     bool
	unsynced   int       // steps appended since the last write
	written    time.Time // when the buffered lines were last written
	synced     time.Time // when the last periodic sync started
	sideEffect bool      // a side-effect call ran since the last write
	sinceCheck int

	// SyncEvery is how many steps are buffered between writes to the
	// store; 0 means DefaultSyncEvery. A write is followed by a sync to
	// disk when the last one started SyncPeriod or more before.
	SyncEvery int
	// SyncPeriod is the least time between two periodic syncs (the
	// syncs before a side effect and at the end are not periodic): a
	// power loss costs at most the steps of about one period. 0 means
	// DefaultSyncPeriod; a negative value syncs at every periodic write.
	SyncPeriod time.Duration
	// WriteEvery bounds how long a decided step waits in the buffer: a
	// step that ends WriteEvery or more after the last write writes the
	// buffer at once (without a sync). 0 means DefaultWriteEvery; a
	// negative value writes only every SyncEvery steps.
	WriteEvery time.Duration
	// CheckpointEvery is how many steps are written between checkpoints,
	// for tasks that implement Snapshotter; 0 means
	// DefaultCheckpointEvery, a negative value none.
	CheckpointEvery int
	// NoSamples keeps each step's record without its samples
	// (StepRecord.Samples), as version 4 journals were: about a quarter
	// smaller on Hanoi (docs/journal.md has the measurement), but `maker
	// view` then cannot show a step's race from the journal. Default
	// false: samples are recorded.
	NoSamples bool
}

// New returns the journal kept in store, to start a run or resume
// one. It reads every stored line once, computing checksums but decoding
// only the header and the checkpoints, and verifies every line's link in
// the hash chain (one HMAC-SHA256 per line); Solve then decodes and
// replays the steps after the last checkpoint (or all of them, for a task
// that is not a Snapshotter). Memory stays constant: no line is kept.
//
// Signing: by default the chain is an HMAC under the key in KeyEnv,
// if set, else under the state folder's key (StateDir; made on first use,
// 0600 in a 0700 folder), and the journal's chain head is recorded in the
// state folder when it begins, at each checkpoint and when it is closed.
// Unsigned opts out: a plain SHA-256 chain, no head.
//
// What it accepts: an empty store (a new run); a whole journal; one whose
// last line was torn by a crash (dropped when Solve appends, see
// TornBytes); a store holding nothing but a torn header (a run that never
// began: Solve starts it over). What it refuses, changing nothing:
// ErrVersion; ErrCorrupt, naming the line, for a store that
// is not a journal, a whole line that is not a journal record, a line over
// MaxLine, or a line that does not match the hash chain (a line was
// changed, dropped, added or moved, or the key is not the one that signed
// it), naming the first such line; ErrKey for a signed journal
// opened with Unsigned, or an unsigned one opened without it;
// ErrRollback for a signed journal that holds fewer lines than its
// recorded head, or other lines up to it (truncated, or an older copy put
// back), or has no head in this state folder; ErrState when the
// state folder cannot be used. On an error the store is not closed.
func New(store Store, opts ...Option) (*Journal, error) {
	trust, err := resolveTrust(opts)
	if err != nil {
		return nil, err
	}
	j := &Journal{store: store, key: trust.key, chain: newChain(trust.key), state: trust.state}
	if err := j.load(); err != nil {
		return nil, err
	}
	return j, nil
}

// Corrupt returns ErrCorrupt for line (from 1) of the journal, saying
// what is wrong with it (format and a, as fmt.Sprintf's), and how to go
// on: the step loop's refusal of a record that does not replay.
func (j *Journal) Corrupt(line int, format string, a ...any) error {
	return fmt.Errorf("%w: %s:%d %s; a journal is only ever appended to by mdap: restore it from a copy, or start a new run with another file",
		ErrCorrupt, j.Path(), line, fmt.Sprintf(format, a...))
}

func (j *Journal) load() error {
	err := j.store.Lines(0, func(n int, line []byte) error {
		lineNo := n + 1
		if len(line) > MaxLine {
			return j.Corrupt(lineNo, "is longer than %d bytes", MaxLine)
		}
		if j.header == nil {
			var h Header
			if !bytes.HasPrefix(line, headerPrefix) || json.Unmarshal(line, &h) != nil || h.Version == 0 {
				return fmt.Errorf("%w: %s is not a journal (line 1 is not a journal header); name a journal written by --journal", ErrCorrupt, j.Path())
			}
			if err := j.checkVersion(h.Version); err != nil {
				return err
			}
			if h.Version >= journalVersion4 && !runIDPattern.MatchString(h.Run) {
				return j.Corrupt(lineNo, "is a header without a run id")
			}
			if err := j.checkKey(&h); err != nil {
				return err
			}
			if _, err := j.chain.verify(line); err != nil {
				if h.Keyed {
					return j.Corrupt(lineNo, "%v (or the key is not the one that signed it: the key of the state folder %s, or of %s when set)", err, j.state, KeyEnv)
				}
				return j.Corrupt(lineNo, "%v", err)
			}
			if err := j.loadHead(&h); err != nil {
				return err
			}
			j.header = &h
			j.replay = n + 1
		} else {
			if _, err := j.chain.verify(line); err != nil {
				return j.Corrupt(lineNo, "%v", err)
			}
			if err := j.checkHead(lineNo); err != nil {
				return err
			}
			switch {
			case bytes.HasPrefix(line, checkpointPrefix):
				var c Checkpoint
				if err := json.Unmarshal(line, &c); err != nil {
					return j.Corrupt(lineNo, "is a checkpoint that does not parse: %v", err)
				}
				j.checkpoint = &c
				j.replay = n + 1
			case bytes.HasPrefix(line, stepPrefix):
				// Decoded when replayed (after the last checkpoint);
				// its bytes are covered by the chain.
			default:
				return j.Corrupt(lineNo, "is not a journal record")
			}
		}
		j.lines = n + 1
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion) || errors.Is(err, ErrKey) ||
			errors.Is(err, ErrRollback) || errors.Is(err, ErrState) {
			return err
		}
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, j.Path(), err)
	}
	if j.noHead && j.lines > 1 {
		return fmt.Errorf("%w: the state folder %s has no record of %s (run %s): it was not written with this state folder, or its record was removed; resume it with the state folder that wrote it (%s), or start a new run with another file",
			ErrRollback, j.state, j.Path(), j.header.Run, StateDirEnv)
	}
	if h := j.head; h != nil {
		return fmt.Errorf("%w: %s holds %d whole lines, but it held %d when it was last checkpointed or closed (%s): it was truncated, or an older copy was put back; restore the newer copy, or start a new run with another file",
			ErrRollback, j.Path(), j.lines, h.Lines, headPath(j.state, j.header.Run))
	}
	if torn := j.store.Torn(); len(torn) > 0 {
		if j.header == nil && !bytes.HasPrefix(headerPrefix, torn) && !bytes.HasPrefix(torn, headerPrefix) {
			return fmt.Errorf("%w: %s is not a journal (no header line); name a journal written by --journal", ErrCorrupt, j.Path())
		}
		j.torn = len(torn)
	}
	return nil
}

// checkVersion refuses a journal format this build does not read, saying
// which build can.
func (j *Journal) checkVersion(v int) error {
	switch {
	case v > Version:
		return fmt.Errorf("%w: %s is journal version %d, newer than this build reads (versions %d to %d): a newer mdap wrote it; view or resume it with that mdap or a later one",
			ErrVersion, j.Path(), v, journalVersion3, Version)
	case v < journalVersion3:
		return fmt.Errorf("%w: %s is journal version %d, older than this build reads (versions %d to %d): it has no hash chain to prove it was not edited; finish it with the build that wrote it",
			ErrVersion, j.Path(), v, journalVersion3, Version)
	}
	return nil
}

// RecordsSamples reports whether the journal keeps each step's samples:
// a version 5 journal (a new one is) unless NoSamples.
func (j *Journal) RecordsSamples() bool {
	return !j.NoSamples && (j.header == nil || j.header.Version >= Version)
}

// checkKey refuses a journal whose signing differs from this Journal's.
func (j *Journal) checkKey(h *Header) error {
	switch {
	case h.Keyed && j.key == nil:
		return fmt.Errorf("%w: %s is signed; resume it without --journal-unsigned (journal.Unsigned), with the state folder (%s) or %s that holds its key",
			ErrKey, j.Path(), StateDirEnv, KeyEnv)
	case !h.Keyed && j.key != nil && h.Version == journalVersion3:
		return fmt.Errorf("%w: %s was written by an earlier mdap (journal version 3) without a key: anyone could have rewritten it, so it is not resumed by default; if you trust the file, resume it with --journal-unsigned (journal.Unsigned), else start a new run with another file",
			ErrKey, j.Path())
	case !h.Keyed && j.key != nil:
		return fmt.Errorf("%w: %s is unsigned (written with --journal-unsigned): anyone could have rewritten it, so it is resumed only with --journal-unsigned (journal.Unsigned); or start a new, signed run with another file",
			ErrKey, j.Path())
	}
	return nil
}

// loadHead reads the chain head the state folder holds for a signed
// version-4 journal, to be checked as its lines are read. An unsigned
// journal whose run the state folder records is a signed one rewritten
// unsigned, and refused.
func (j *Journal) loadHead(h *Header) error {
	if j.state == "" || h.Version < journalVersion4 {
		return nil
	}
	head, err := loadHead(j.state, h.Run)
	if !h.Keyed {
		if err == nil {
			return fmt.Errorf("%w: %s says it is unsigned, but its run %s was signed when it was written (the state folder %s records it): it was rewritten; restore the signed copy, or start a new run with another file",
				ErrRollback, j.Path(), h.Run, j.state)
		}
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		j.noHead = true // refused after the header (load), unless it is alone
		return nil
	}
	if err != nil {
		return err
	}
	j.head = head
	return j.checkHead(1)
}

// checkHead compares line lineNo's chain value with the recorded head's
// when it is the head's line.
func (j *Journal) checkHead(lineNo int) error {
	if j.head == nil || lineNo != j.head.Lines {
		return nil
	}
	if hex.EncodeToString(j.chain.prev[:]) != j.head.Chain {
		return fmt.Errorf("%w: %s:%d is not the line recorded when the journal was last checkpointed or closed: the journal was replaced by another copy; restore the newer copy, or start a new run with another file",
			ErrRollback, j.Path(), lineNo)
	}
	j.head = nil
	return nil
}

// recordHead keeps the journal's chain head in the state folder, once its
// lines are synced: a signed journal of version 4 or later only.
func (j *Journal) recordHead() error {
	if j.broken || j.key == nil || j.state == "" || j.header == nil || j.header.Version < journalVersion4 || j.lines == 0 {
		return nil
	}
	return saveHead(j.state, j.header.Run, chainHead{Lines: j.lines, Chain: hex.EncodeToString(j.chain.prev[:]), Journal: j.Path()})
}

// TornBytes returns the size of the torn last line the store held (a
// write cut short by a crash), which is dropped when the run resumes; 0
// when there was none.
func (j *Journal) TornBytes() int { return j.torn }

// Path returns the name of the journal's store: for a file, its path.
func (j *Journal) Path() string { return j.store.Name() }

// LastCheckpoint returns the journal's last checkpoint, or nil: a resume
// restores it, then replays the steps after it (Replay).
func (j *Journal) LastCheckpoint() *Checkpoint { return j.checkpoint }

// Replay calls fn with each step record to replay (those after the last
// checkpoint, or all since FromStart), in order, with its line number
// (from 1), and then forgets them: a second call sees none. A line that
// is not a step record is ErrCorrupt; an error from fn stops the walk
// and is returned.
func (j *Journal) Replay(fn func(n int, rec *StepRecord) error) error {
	from := j.replay
	j.replay = j.lines
	if from >= j.lines {
		return nil
	}
	return j.store.Lines(from, func(n int, line []byte) error {
		if n >= j.lines || bytes.HasPrefix(line, checkpointPrefix) {
			return nil
		}
		rec, err := decodeRecord(unseal(line))
		if err != nil {
			return j.Corrupt(n+1, "is not a step record: %v", err)
		}
		return fn(n+1, rec)
	})
}

// decodeRecord reads a journal step line strictly, with numbers kept as
// json.Number, as intent.Parse gives them, so a replayed winner is the
// value that won.
func decodeRecord(raw []byte) (*StepRecord, error) {
	var rec StepRecord
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value on the line")
	}
	return &rec, nil
}

// FromStart makes the replay start at the first line after the header,
// ignoring checkpoints: for a task that cannot restore one.
func (j *Journal) FromStart() {
	j.replay, j.checkpoint = 1, nil
}

func (j *Journal) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.Path(), err)
	}
	return j.appendLine(b)
}

// writeStep writes a step record's line: json.Marshal of the record,
// without its samples in a journal that keeps none (RecordsSamples).
func (j *Journal) writeStep(rec *StepRecord) error {
	if rec.Samples != nil && !j.RecordsSamples() {
		bare := *rec
		bare.Samples, bare.MoreSamples = nil, 0
		return j.writeLine(&bare)
	}
	return j.writeLine(rec)
}

// appendLine chains one encoded JSON object (see chain.seal) and stores
// it.
func (j *Journal) appendLine(b []byte) error {
	if err := j.store.Append(j.chain.seal(b)); err != nil {
		return j.fail(err)
	}
	j.lines++
	return nil
}

// Run is what a journal records of a run in its header (Begin), and a
// resume checks (Check).
type Run struct {
	// Fingerprint identifies the task (maker.Task's Fingerprint),
	// TaskVersion the version of its rules ("" for none).
	Fingerprint, TaskVersion string
	// Settings are the run's settings as JSON (maker.Settings), recorded
	// in a new journal's header. Diff, when set, names each difference
	// between the settings a resumed journal recorded and the run's; its
	// error says the recorded settings do not parse (Check: ErrCorrupt).
	Settings json.RawMessage
	Diff     func(recorded json.RawMessage) ([]string, error)
	// Members are the identities of an ensemble's members, in order.
	Members []string
}

// Check refuses a journal of another task, one begun under other
// decision rules, another version of the task's or other settings
// (ErrMismatch, naming what differs), one whose recorded settings do not
// parse (ErrCorrupt), and a second use (ErrUsed). It
// changes nothing in the store.
func (j *Journal) Check(run Run) error {
	if j.used {
		return fmt.Errorf("%w: %s", ErrUsed, j.Path())
	}
	j.used = true
	if j.header == nil {
		return nil
	}
	if j.header.Fingerprint != run.Fingerprint {
		return fmt.Errorf("%w: %s was written for task %q, not %q; give the same task, or another journal file",
			ErrMismatch, j.Path(), j.header.Fingerprint, run.Fingerprint)
	}
	if diff := j.header.versionDiff(run.TaskVersion); len(diff) > 0 {
		return fmt.Errorf("%w: %s was begun under other rules (%s): this build could decide its next steps differently; finish it with the build and task that began it, or start a new run with another file",
			ErrMismatch, j.Path(), strings.Join(diff, "; "))
	}
	if run.Diff == nil {
		return nil
	}
	diff, err := run.Diff(j.header.Settings)
	if err != nil {
		return fmt.Errorf("%w: %s: the settings in its header do not parse: %w", ErrCorrupt, j.Path(), err)
	}
	if len(diff) > 0 {
		return fmt.Errorf("%w: %s was written with other settings (%s); resume with the settings of the first run, or use another journal file",
			ErrMismatch, j.Path(), strings.Join(diff, "; "))
	}
	return nil
}

// Begin makes the journal ready to append, once the replay found it sound:
// a torn last line is cut, and a journal that never began (no whole
// header) is started over with a header recording run.
func (j *Journal) Begin(run Run) error {
	if j.header != nil && j.noHead {
		// The header alone, its head never written (a crash between the
		// two): record the head before the first step, or a second crash
		// would leave steps with no head, refused as a rollback.
		j.noHead = false
		return j.syncHead()
	}
	if j.header != nil {
		return nil // the store cuts a torn tail on the first append
	}
	if err := j.store.Reset(); err != nil {
		return fmt.Errorf("journal %s: %w", j.Path(), err)
	}
	j.lines, j.chain = 0, newChain(j.key)
	j.header = &Header{Version: Version, Run: newRunID(), Mdap: mdapVersion(), Decisions: DecisionVersion, TaskVersion: run.TaskVersion,
		Fingerprint: run.Fingerprint, Settings: run.Settings, Keyed: j.key != nil}
	if len(run.Members) > 1 {
		j.header.Members = run.Members
	}
	if err := j.writeLine(j.header); err != nil {
		return err
	}
	return j.syncHead()
}

// Step appends a decided step's record to the buffer, and writes (and
// syncs) the buffer when Journal's Durability says.
func (j *Journal) Step(rec *StepRecord) error {
	if err := j.writeStep(rec); err != nil {
		return err
	}
	j.sinceCheck++
	j.unsynced++
	if j.unsynced < cmp.Or(j.SyncEvery, DefaultSyncEvery) && !j.sideEffect &&
		(j.WriteEvery < 0 || time.Since(j.written) < cmp.Or(j.WriteEvery, DefaultWriteEvery)) {
		return nil
	}
	if err := j.Flush(); err != nil {
		return err
	}
	if period := cmp.Or(j.SyncPeriod, DefaultSyncPeriod); period >= 0 && j.written.Sub(j.synced) < period {
		return nil
	}
	j.synced = j.written
	if bg, ok := j.store.(backgroundSyncer); ok {
		if err := bg.SyncBackground(); err != nil {
			return j.fail(fmt.Errorf("sync: %w", err))
		}
		return nil
	}
	return j.sync()
}

// backgroundSyncer is a Store that can start a sync to disk without
// waiting for it (maker/journalfile's): the periodic sync then stays off the
// step loop, and a failure fails a later call.
type backgroundSyncer interface {
	SyncBackground() error
}

// CheckpointDue reports whether a checkpoint is due after this step.
func (j *Journal) CheckpointDue() bool {
	every := cmp.Or(j.CheckpointEvery, DefaultCheckpointEvery)
	return every > 0 && j.sinceCheck >= every
}

// WriteCheckpoint saves the task's state and the run's totals (a
// maker.Report, marshalled as JSON) before step next, and syncs.
func (j *Journal) WriteCheckpoint(next int, state json.RawMessage, last *intent.Observation, total any) error {
	j.sinceCheck = 0
	b, err := json.Marshal(total)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.Path(), err)
	}
	if err := j.writeLine(Checkpoint{Next: next, State: state, Last: last, Total: b}); err != nil {
		return err
	}
	return j.syncHead()
}

// syncHead writes and syncs the lines, then records the chain head of a
// signed journal; an unsigned one is only written (Flush).
func (j *Journal) syncHead() error {
	if err := j.Flush(); err != nil {
		return err
	}
	if j.key == nil {
		return nil
	}
	if err := j.sync(); err != nil {
		return err
	}
	return j.recordHead()
}

func (j *Journal) sync() error {
	j.unsynced = 0
	if err := j.store.Sync(); err != nil {
		return j.fail(fmt.Errorf("sync: %w", err))
	}
	return nil
}

// Pending records a decided step whose side-effect call is about to run,
// and makes it durable before it runs.
func (j *Journal) Pending(rec StepRecord) error {
	rec.Pending = true
	rec.Observation, rec.ObservationDigest = nil, ""
	if err := j.writeStep(&rec); err != nil {
		return err
	}
	if err := j.Flush(); err != nil {
		return err
	}
	j.sideEffect = true
	return j.sync()
}

// fail marks the journal broken by a failed write, flush or sync, and
// says which journal failed.
func (j *Journal) fail(err error) error {
	j.broken = true
	return fmt.Errorf("journal %s: %w", j.Path(), err)
}

// Flush writes the buffered lines to the store (without a sync): a
// killed process then loses none of them.
func (j *Journal) Flush() error {
	j.written, j.sideEffect, j.unsynced = time.Now(), false, 0
	if err := j.store.Flush(); err != nil {
		return j.fail(err)
	}
	return nil
}

// Close flushes, syncs and closes the store, which releases its lock; a
// signed journal's chain head is then recorded in the state folder (see
// New). It is safe to call more than once.
func (j *Journal) Close() error {
	if j.closed {
		return nil
	}
	j.closed = true
	err := j.store.Sync()
	if err == nil {
		err = j.recordHead()
	}
	return errors.Join(err, j.store.Close())
}
