package view

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
)

// Errors of a journal file, for errors.Is.
var (
	// ErrPath: the path is not a readable regular file.
	ErrPath = errors.New("journal path is not a readable regular file")
	// ErrNotJournal: the file is not a journal mdap wrote (its first
	// line is not a journal header, or a later line is not a record).
	ErrNotJournal = errors.New("not a journal")
	// ErrNoStep: the step asked for is not in the journal (yet), or not
	// kept in memory.
	ErrNoStep = errors.New("step not recorded")
)

// indexEvery is how many steps one offset of the sparse index covers: a
// step's record is found by reading at most this many lines.
const indexEvery = 256

// DefaultPoll is how often Follow looks for lines appended to the file.
const DefaultPoll = 250 * time.Millisecond

// File is a journal file read without a lock and never written: a run
// may be appending to it. Read and Follow feed a Run; Record finds a
// step's line again. Safe for concurrent use.
type File struct {
	path string
	f    *os.File
	run  *Run

	mu     sync.Mutex // guards what follows
	off    int64      // offset after the last whole line read
	lines  int        // whole lines read
	header bool
	// models are the run's members' identities (the header's members,
	// or its one model), for the model of each sample of a race.
	models []string
	index  []int64 // index[i]: offset of the first line of step i*indexEvery
}

// OpenFile opens the journal at path for reading. It refuses, wrapping
// ErrPath, what is not a regular file (a FIFO is refused, not waited
// on). Read it with Read or Follow.
func OpenFile(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPath, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is not a regular file (%s)", ErrPath, path, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{path: path, f: f, run: NewRun(Info{Source: path})}, nil
}

// Run is the aggregate of what has been read.
func (j *File) Run() *Run { return j.run }

// Close closes the file.
func (j *File) Close() error { return j.f.Close() }

// Read reads the whole lines appended since the last Read into the Run
// (a last line without its newline is being written, and waits for the
// next Read). It reports whether it read any.
//
// Errors: ErrNotJournal naming the line; ErrPath when the file shrank
// (it is not the file the view began with).
func (j *File) Read() (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fi, err := j.f.Stat()
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrPath, err)
	}
	if fi.Size() < j.off {
		return false, fmt.Errorf("%w: %s shrank from %d to %d bytes while viewed: it was replaced or truncated", ErrPath, j.path, j.off, fi.Size())
	}
	if fi.Size() == j.off {
		return false, nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(j.f, j.off, fi.Size()-j.off), 1<<16)
	var long []byte
	read := false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(long) <= journal.MaxLine {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > journal.MaxLine {
				return read, fmt.Errorf("%w: %s:%d is longer than %d bytes", ErrNotJournal, j.path, j.lines+1, journal.MaxLine)
			}
			line = long
		}
		if err != nil { // io.EOF: a torn or unfinished last line waits
			return read, nil
		}
		if err := j.line(line[:len(line)-1]); err != nil {
			return read, err
		}
		j.off += int64(len(line))
		j.lines++
		read = true
	}
}

var (
	headerPrefix     = []byte(`{"mdap_journal":`)
	stepPrefix       = []byte(`{"step":`)
	checkpointPrefix = []byte(`{"checkpoint":`)
)

// header is the part of a journal's first line the view shows.
type header struct {
	Version  int            `json:"mdap_journal"`
	Run      string         `json:"run"`
	Mdap     string         `json:"mdap"`
	Task     string         `json:"task"`
	Settings maker.Settings `json:"settings"`
	Keyed    bool           `json:"keyed"`
	Members  []string       `json:"members"`
}

// checkpoint is the part of a checkpoint line the view shows.
type checkpoint struct {
	Next   int `json:"checkpoint"`
	Report struct {
		Cost float64 `json:"cost"`
	} `json:"report"`
}

func (j *File) line(line []byte) error {
	n := j.lines + 1
	if !j.header {
		var h header
		if !bytes.HasPrefix(line, headerPrefix) || json.Unmarshal(line, &h) != nil || h.Version == 0 {
			return fmt.Errorf("%w: %s (line 1 is not a journal header); name a journal written by --journal", ErrNotJournal, j.path)
		}
		if h.Version > journal.Version {
			return fmt.Errorf("%w: %s is journal version %d, newer than this build reads (up to %d): a newer mdap wrote it; view it with that mdap or a later one", ErrNotJournal, j.path, h.Version, journal.Version)
		}
		j.header = true
		j.models = h.Members
		if len(j.models) == 0 {
			j.models = []string{h.Settings.Model}
		}
		info := Info{Source: j.path, Task: h.Task, Run: h.Run, Mdap: h.Mdap, Model: h.Settings.Model,
			K: h.Settings.K, Total: TotalSteps(h.Task), Signed: h.Keyed}
		if h.Settings.KAuto != nil {
			info.Target = kAutoTarget(h.Settings.KAuto)
		}
		j.run.mergeInfo(info)
		return nil
	}
	switch {
	case bytes.HasPrefix(line, stepPrefix):
		rec, err := decodeStep(line)
		if err != nil {
			return fmt.Errorf("%w: %s:%d is a step record that does not parse: %w", ErrNotJournal, j.path, n, err)
		}
		if rec.Step%indexEvery == 0 && rec.Step/indexEvery == len(j.index) {
			j.index = append(j.index, j.off)
		}
		if rec.Pending {
			j.run.SetPending(rec.Step)
		} else {
			j.run.Add(&rec)
		}
	case bytes.HasPrefix(line, checkpointPrefix):
		var c checkpoint
		if err := json.Unmarshal(line, &c); err != nil {
			return fmt.Errorf("%w: %s:%d is a checkpoint that does not parse: %w", ErrNotJournal, j.path, n, err)
		}
		j.run.SetCost(c.Report.Cost, c.Next)
	default:
		return fmt.Errorf("%w: %s:%d is not a journal record", ErrNotJournal, j.path, n)
	}
	return nil
}

// Follow reads the journal, then every poll (DefaultPoll when 0) the
// lines appended to it, until ctx ends or the journal is found unsound;
// the error is then kept in the Run's Stats too. It returns nil when ctx
// ends.
func (j *File) Follow(ctx context.Context, poll time.Duration) error {
	if poll <= 0 {
		poll = DefaultPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if _, err := j.Read(); err != nil {
			j.run.SetErr(err)
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Record returns step's journal record as the file holds it (the chain
// field removed), with its samples as a Live shows them (raceOf: at most
// MaxRaceSamples, each with its model and class), reading at most
// indexEvery records from the nearest indexed offset. A step whose
// side-effect call is pending returns its pending record. A record of a
// journal before version 5 has no samples.
//
// Errors: ErrNoStep when the step has not been read yet.
func (j *File) Record(step int) ([]byte, error) {
	j.mu.Lock()
	k := step / indexEvery
	if step < 0 || k >= len(j.index) {
		j.mu.Unlock()
		return nil, fmt.Errorf("%w: step %d is not in %s yet", ErrNoStep, step, j.path)
	}
	start, end, models := j.index[k], j.off, j.models
	j.mu.Unlock()
	br := bufio.NewReaderSize(io.NewSectionReader(j.f, start, end-start), 1<<16)
	var found []byte
	for {
		line, err := readLine(br)
		if err != nil {
			break
		}
		if !bytes.HasPrefix(line, stepPrefix) {
			continue
		}
		s, pending := stepOf(line)
		if s > step {
			break
		}
		if s == step {
			found = bytes.Clone(line)
			if !pending {
				break
			}
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: step %d is not in %s yet", ErrNoStep, step, j.path)
	}
	return raceLine(unchain(found), models)
}

// readLine reads a whole line, without its newline, of any length up to
// journal.MaxLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(long) <= journal.MaxLine {
			line, err = br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
}

// stepOf reads a step line's number, and whether it is a pending record,
// without decoding it: the record begins {"step":N, and a pending one
// goes on "pending":true.
func stepOf(line []byte) (int, bool) {
	rest := line[len(stepPrefix):]
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		return -1, false
	}
	n, err := strconv.Atoi(string(rest[:i]))
	if err != nil {
		return -1, false
	}
	return n, bytes.HasPrefix(rest[i:], []byte(`,"pending":true`))
}

// chainField begins the hash-chain field that ends every journal line.
var chainField = []byte(`,"chain":"`)

// unchain removes a line's trailing chain field: the record as the
// solver encoded it.
func unchain(line []byte) []byte {
	i := bytes.LastIndex(line, chainField)
	if i < 0 {
		return line
	}
	return append(line[:i], '}')
}

// TotalSteps is the number of steps of the task a fingerprint names, when
// it is known in advance: 2^N-1 for Hanoi ("hanoi:N=20"); 0 otherwise.
func TotalSteps(fingerprint string) int {
	var n int
	if _, err := fmt.Sscanf(fingerprint, "hanoi:N=%d", &n); err != nil || n < 1 || n > 40 {
		return 0
	}
	if fingerprint != fmt.Sprintf("hanoi:N=%d", n) {
		return 0
	}
	return hanoi.TotalSteps(n)
}
