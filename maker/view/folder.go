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
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mdap-go/mdap/maker/journal"
)

// MaxFolderJournals is the most journals of a state folder a view
// follows; a folder with more shows the first ones (by name) and says so.
const MaxFolderJournals = 4096

// Folder is a batch's state folder (maker solve --state DIR: one journal
// per task), read without a lock and never written, and optionally the
// batch's results file (--out), for the tasks' statuses. Each task is a
// BatchTask of its Batch; a task with a step loop's journal has a Run and
// Records of its own. Read and Follow pick up journals as they appear
// and lines as they are appended.
//
// Memory and files: one open file and a byte per decided step for each
// step-loop journal, a few counters for each decomposition's; at most
// MaxFolderJournals journals.
type Folder struct {
	dir, results string
	batch        *Batch

	mu       sync.Mutex
	journals map[string]*folderJournal // by file name
	resOff   int64
	resLines int
	byFile   map[string]folderResult // results by their journal's file name
	others   []string                // names of results without a journal
	full     bool
	target   float64 // SetTarget's
}

// SetTarget sets the target success probability T of the tasks' runs
// whose journals record none (see Run.SetLimits); call it before Read.
func (f *Folder) SetTarget(target float64) {
	f.mu.Lock()
	f.target = target
	f.mu.Unlock()
}

// folderJournal is one journal of the folder.
type folderJournal struct {
	name   string
	file   *File         // a step loop's journal
	deco   *decompTail   // a decomposition's
	broken bool          // stopped following: its error is the task's
	result *folderResult // its result, once known
}

// folderResult is the part of a results line the view shows.
type folderResult struct {
	ID      string  `json:"id"`
	Line    int     `json:"line"`
	Kind    string  `json:"kind"`
	Status  string  `json:"status"`
	Steps   int     `json:"steps"`
	Samples int     `json:"samples"`
	Cost    float64 `json:"cost"`
	Error   string  `json:"error"`
	Journal string  `json:"journal"`
}

// OpenFolder opens the state folder dir and, when results is not empty,
// the batch's results file, for reading. costCap is the batch's cap in
// dollars (0: none), shown against its cost.
//
// Errors: ErrPath when dir is not a readable folder.
func OpenFolder(dir, results string, costCap float64) (*Folder, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPath, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a folder", ErrPath, dir)
	}
	if _, err := os.ReadDir(dir); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPath, err)
	}
	return &Folder{dir: dir, results: results, batch: NewBatch(dir, costCap),
		journals: map[string]*folderJournal{}, byFile: map[string]folderResult{}}, nil
}

// Batch is the batch as read so far.
func (f *Folder) Batch() *Batch { return f.batch }

// Close closes the journals.
func (f *Folder) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, j := range f.journals {
		if j.file != nil {
			errs = append(errs, j.file.Close())
		}
	}
	return errors.Join(errs...)
}

// Follow reads the folder, then every poll (DefaultPoll when 0) what
// changed, until ctx ends or the folder cannot be read; the error is then
// kept in the Batch's stats too. It returns nil when ctx ends.
func (f *Folder) Follow(ctx context.Context, poll time.Duration) error {
	if poll <= 0 {
		poll = DefaultPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := f.Read(); err != nil {
			f.batch.SetErr(err)
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// journalSuffix ends a state folder's journal name: "-" and 12 hex
// digits of the id's hash (maker/batch's names).
var journalSuffix = regexp.MustCompile(`-[0-9a-f]{12}\.jsonl$`)

// Read looks once for new journals, lines appended to the journals and
// the results file, and new results.
//
// Errors: ErrPath when the folder or the results file cannot be read
// (the results file's also ErrResults). A
// journal that is not one is shown as its task's error, not returned.
func (f *Folder) Read() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.readResults(); err != nil {
		return err
	}
	ents, err := os.ReadDir(f.dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPath, err)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".jsonl") || f.journals[name] != nil {
			continue
		}
		if len(f.journals) >= MaxFolderJournals {
			if !f.full {
				f.full = true
				f.batch.SetErr(fmt.Errorf("%s holds more than %d journals: the view follows the first %d", f.dir, MaxFolderJournals, MaxFolderJournals))
			}
			break
		}
		f.open(name)
	}
	for _, j := range f.journals {
		f.readJournal(j)
	}
	for _, id := range f.others {
		r := f.byFile[id]
		f.batch.Put(BatchTask{Name: id, ID: r.ID, Kind: r.Kind, Line: r.Line, Status: r.Status, Steps: r.Steps,
			Samples: r.Samples, Cost: r.Cost, Error: r.Error}, nil, nil)
	}
	f.others = f.others[:0]
	return nil
}

// open begins following the journal name, once its first line is whole.
func (f *Folder) open(name string) {
	path := filepath.Join(f.dir, name)
	first, ok := firstLine(path)
	if !ok {
		return // empty, or its header still being written
	}
	id := journalSuffix.ReplaceAllString(name, "")
	j := &folderJournal{name: name}
	t := BatchTask{Name: name, ID: id, Status: StatusUnfinished}
	switch {
	case bytes.HasPrefix(first, headerPrefix):
		file, err := OpenFile(path)
		if err != nil {
			j.broken, t.Error = true, err.Error()
			break
		}
		j.file = file
		file.Run().SetLimits(f.target, 0)
		fp := fingerprintOf(first)
		t.Total = TotalSteps(fp)
		if kind, _, ok := strings.Cut(fp, ":"); ok && t.Total > 0 {
			t.Kind = kind // hanoi: its fingerprint says so
		}
	case bytes.HasPrefix(first, decompPrefix):
		j.deco = &decompTail{path: path}
		var h struct {
			Family string `json:"family"`
		}
		_ = json.Unmarshal(first, &h)
		t.Kind = h.Family
	default:
		j.broken, t.Error = true, fmt.Sprintf("%s: line 1 is not a journal header", name)
	}
	f.journals[name] = j
	if j.file != nil {
		f.batch.Put(t, j.file.Run(), j.file)
	} else {
		f.batch.Put(t, nil, nil)
	}
}

// fingerprintOf reads the task fingerprint of a journal header.
func fingerprintOf(header []byte) string {
	var h struct {
		Task string `json:"task"`
	}
	_ = json.Unmarshal(header, &h)
	return h.Task
}

// firstLine returns the first whole line of the file at path.
func firstLine(path string) ([]byte, bool) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer fh.Close()
	line, err := readLine(bufio.NewReaderSize(fh, 1<<16))
	return line, err == nil
}

// readJournal reads what was appended to j, and shows its task.
func (f *Folder) readJournal(j *folderJournal) {
	if r, ok := f.byFile[j.name]; ok && j.result == nil {
		j.result = &r
	}
	res := j.result
	switch {
	case j.broken:
	case j.file != nil:
		if _, err := j.file.Read(); err != nil {
			j.broken = true
			f.batch.Update(j.name, func(t *BatchTask) { t.Error = err.Error() })
		}
	case j.deco != nil:
		if err := j.deco.read(); err != nil {
			j.broken = true
			f.batch.Update(j.name, func(t *BatchTask) { t.Error = err.Error() })
		} else if res == nil {
			d := j.deco
			f.batch.Update(j.name, func(t *BatchTask) { t.Steps, t.Samples, t.Cost = d.decisions, d.samples, d.cost })
		}
	}
	if res != nil {
		f.batch.Update(j.name, func(t *BatchTask) {
			t.ID, t.Kind, t.Line, t.Status = res.ID, res.Kind, res.Line, res.Status
			t.Steps, t.Samples, t.Cost, t.Error = res.Steps, res.Samples, res.Cost, res.Error
		})
	}
}

// readResults reads the lines appended to the results file.
func (f *Folder) readResults() error {
	if f.results == "" {
		return nil
	}
	fh, err := os.OpenFile(f.results, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // no result yet
	}
	if err != nil {
		return fmt.Errorf("%w: %w: %w", ErrPath, ErrResults, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %w: %s is not a regular file", ErrPath, ErrResults, f.results)
	}
	if fi.Size() < f.resOff {
		return fmt.Errorf("%w: %w: %s shrank while viewed: it was replaced or truncated", ErrPath, ErrResults, f.results)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(fh, f.resOff, fi.Size()-f.resOff), 1<<16)
	for {
		line, err := readLine(br)
		if err != nil {
			return nil // a torn last line waits
		}
		f.resOff += int64(len(line)) + 1
		f.resLines++
		var r folderResult
		if json.Unmarshal(line, &r) != nil || r.Status == "" {
			return fmt.Errorf("%w: %s:%d is not a results line of maker solve", ErrNotJournal, f.results, f.resLines)
		}
		if r.Journal != "" {
			f.byFile[filepath.Base(r.Journal)] = r
			continue
		}
		name := r.ID
		if name == "" {
			name = "line " + strconv.Itoa(r.Line)
		}
		f.byFile[name] = r
		f.others = append(f.others, name)
	}
}

// decompPrefix begins a decomposition's journal (maker/decompose).
var decompPrefix = []byte(`{"mdap_decompose":`)

// decompTail counts a decomposition journal's decisions as they are
// appended: each line after the header is one, with its samples and cost.
type decompTail struct {
	path               string
	off                int64
	header             bool
	decisions, samples int
	cost               float64
}

func (d *decompTail) read() error {
	fh, err := os.OpenFile(d.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPath, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPath, err)
	}
	if fi.Size() < d.off {
		return fmt.Errorf("%w: %s shrank while viewed", ErrPath, d.path)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(fh, d.off, fi.Size()-d.off), 1<<16)
	for {
		line, err := readLine(br)
		if err != nil {
			return nil
		}
		d.off += int64(len(line)) + 1
		if !d.header {
			d.header = true
			continue
		}
		var l struct {
			Samples int     `json:"samples"`
			Cost    float64 `json:"cost"`
		}
		if len(line) > journal.MaxLine || json.Unmarshal(line, &l) != nil {
			return fmt.Errorf("%w: %s has a line that does not parse", ErrNotJournal, d.path)
		}
		d.decisions++
		d.samples += l.Samples
		d.cost += l.Cost
	}
}

// FollowDecomposition shows, as the task name of b, the decomposition
// whose journal is at path (maker/decompose's: a header, then a line per
// decision): its decisions, samples and cost as they are appended, read
// every poll (DefaultPoll when 0) until ctx ends, and once more then. A
// journal not created yet is waited for. It returns nil when ctx ends.
//
// Errors: ErrPath or ErrNotJournal when the journal cannot be read; the
// task shows the error too.
func FollowDecomposition(ctx context.Context, b *Batch, name, path string, poll time.Duration) error {
	if poll <= 0 {
		poll = DefaultPoll
	}
	d := &decompTail{path: path}
	read := func() error {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err := d.read(); err != nil {
			b.Update(name, func(t *BatchTask) { t.Error = err.Error() })
			return err
		}
		b.Update(name, func(t *BatchTask) { t.Steps, t.Samples, t.Cost = d.decisions, d.samples, d.cost })
		return nil
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := read(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return read()
		case <-t.C:
		}
	}
}
