package view

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// Errors of Open, for errors.Is.
var (
	// ErrResultsOfRun: Limits.Results was given for a journal file; a
	// results file belongs to a batch's state folder.
	ErrResultsOfRun = errors.New("a results file applies to a state folder, not a journal")
	// ErrNoHeader: an export was asked of a journal without its header
	// yet: there is nothing to export.
	ErrNoHeader = errors.New("no journal header yet: nothing to export")
	// ErrExportFolder: an export was asked of a state folder; exports
	// are of one run.
	ErrExportFolder = errors.New("an export is of one run's journal, not of a state folder")
	// ErrResults: Limits.Results names a file that cannot be read as a
	// results file (it is not a regular file, it cannot be opened, or it
	// shrank while viewed); always with ErrPath.
	ErrResults = errors.New("the results file cannot be read")
)

// Limits are what a journal does not record and a view shows: a batch's
// results file (for a state folder), the spending cap, the target.
type Limits struct {
	// Results is a batch's results file (its tasks' solved, failed and
	// invalid statuses); a state folder's only.
	Results string `flag:"results" usage:"with a STATE_FOLDER: the batch's results FILE (maker solve --out), for the tasks' solved, failed and invalid statuses"`
	// MaxCost is the run's (the batch's) spending cap in dollars, shown
	// against its cost; 0 means none.
	MaxCost float64 `flag:"max-cost" usage:"the run's (a batch's) spending cap in dollars, shown against its cost (a journal does not record it)"`
	// Target is the run's target success probability T in (0, 1), for
	// the failure budget 1 - T; 0 means the journal's (under --k auto).
	Target float64 `flag:"target" usage:"the run's target success probability T in (0, 1), for the failure budget 1 - T (default: the journal's, under --k auto)"`
}

// Validate refuses a MaxCost that is negative, NaN or infinite, and a
// Target outside (0, 1) other than 0, as a *fielderr.Error naming the
// field, its value and the fix.
func (l Limits) Validate() error {
	switch {
	case !(l.MaxCost >= 0) || math.IsInf(l.MaxCost, 1):
		return fielderr.New("view.Limits", "MaxCost", l.MaxCost, "give a cap in dollars above 0 (0: none)")
	case l.Target != 0 && !(l.Target > 0 && l.Target < 1):
		return fielderr.New("view.Limits", "Target", l.Target, "give a probability between 0 and 1, such as 0.95")
	}
	return nil
}

// Source is what a view shows from disk: one run's journal file, or a
// batch's state folder (maker solve --state), read once by Open and
// followed as it grows. It is read, never locked or written.
type Source struct {
	file   *File
	folder *Folder
}

// Open opens path, a journal file or a state folder, with lim, and reads
// what it holds now.
//
// Errors: Validate's; ErrResultsOfRun for a journal with lim.Results;
// ErrPath when path cannot be opened (OpenFile's, OpenFolder's), with
// ErrResults when it is lim.Results that cannot be read; the first
// Read's (ErrNotJournal naming the line, ...). Nothing is left open on an
// error. Close a Source.
func Open(path string, lim Limits) (*Source, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		f, err := OpenFolder(path, lim.Results, lim.MaxCost)
		if err != nil {
			return nil, err
		}
		f.SetTarget(lim.Target)
		if err := f.Read(); err != nil {
			f.Close()
			return nil, err
		}
		return &Source{folder: f}, nil
	}
	if lim.Results != "" {
		return nil, fmt.Errorf("%w: %s is a journal", ErrResultsOfRun, path)
	}
	j, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	j.Run().SetLimits(lim.Target, lim.MaxCost)
	if _, err := j.Read(); err != nil {
		j.Close()
		return nil, err
	}
	return &Source{file: j}, nil
}

// IsFolder reports whether the source is a state folder.
func (s *Source) IsFolder() bool { return s.folder != nil }

// Config is the view's Config of the source (without a Token): the run
// and its records, or the batch.
func (s *Source) Config() Config {
	if s.folder != nil {
		return Config{Batch: s.folder.Batch()}
	}
	return Config{Run: s.file.Run(), Records: s.file}
}

// Follow reads what is appended every poll (DefaultPoll when 0) until
// ctx ends (nil) or the source cannot be read (File.Follow's and
// Folder.Follow's errors).
func (s *Source) Follow(ctx context.Context, poll time.Duration) error {
	if s.folder != nil {
		return s.folder.Follow(ctx, poll)
	}
	return s.file.Follow(ctx, poll)
}

// Export writes the run's step map as a PNG to pngPath and its HTML
// report to htmlPath (WriteFile: whole or not at all), each when not
// empty. Errors: ErrExportFolder for a state folder; ErrNoHeader for a
// journal without its header yet; WriteFile's (ErrExportPath for a file
// that cannot be created there). Nothing is written on the first two.
func (s *Source) Export(pngPath, htmlPath string) error {
	if s.folder != nil {
		return ErrExportFolder
	}
	r := s.file.Run()
	if r.Stats().Task == "" {
		return ErrNoHeader
	}
	if pngPath != "" {
		if err := WriteFile(pngPath, r.WritePNG); err != nil {
			return err
		}
	}
	if htmlPath != "" {
		return WriteFile(htmlPath, r.WriteHTML)
	}
	return nil
}

// Close closes the journal file, or the folder's journals.
func (s *Source) Close() error {
	if s.folder != nil {
		return s.folder.Close()
	}
	return s.file.Close()
}

// WatchDecomposition shows the decomposition (maker multiply, sort) whose
// journal is at path as a new Batch of one task, name, kind and id
// family, running: FollowDecomposition in a goroutine of its own until
// stop is called or ctx ends. stop returns once that goroutine has
// ended, after its last read; call it once.
func WatchDecomposition(ctx context.Context, family, path string) (b *Batch, stop func()) {
	b = NewBatch(path, 0)
	b.Put(BatchTask{Name: family, ID: family, Kind: family, Status: StatusRunning}, nil, nil)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = FollowDecomposition(ctx, b, family, path, 0) // its error is the task's
	}()
	return b, func() {
		cancel()
		<-done
	}
}
