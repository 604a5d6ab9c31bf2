package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// Validate refuses a suite that Suites does not list, as a
// *fielderr.Error naming "Suites" and the name, wrapping ErrSuite (not
// ErrConfig). Cost: O(suites).
func (o Options) Validate() error {
	for _, s := range o.Suites {
		if !slices.Contains(Suites, s) {
			return &fielderr.Error{Err: ErrSuite, Config: "benchmarks.Options", Fields: []fielderr.Field{{Name: "Suites", Value: s}},
				Fix: "use one of " + strings.Join(Suites, ", ")}
		}
	}
	return nil
}

// MergeError is RunInto's error when the report it was to merge into
// cannot be read; its text is ReadReport's error's, which it wraps
// (ErrNotReport, or a missing file's fs.ErrNotExist).
type MergeError struct{ Err error }

func (e *MergeError) Error() string { return e.Err.Error() }
func (e *MergeError) Unwrap() error { return e.Err }

// RunInto runs o's suites (Run) and writes their report into dir
// (WriteDir). With merge it first reads the report already in dir
// (ReadReport), before any suite runs, and keeps the suites of it that o
// does not run (Merge). It returns the report and the suites this run
// measured. The report is written even when a figure is past its bar
// (BarErr is the caller's to check).
//
// When a suite fails or ctx ends, the suites that finished before it are
// still written (merged as above), so an hour of measurement is not lost
// to the last suite's failure; rep and ran are then theirs, with Run's
// error. When none finished, nothing is written and rep is nil.
//
// Errors, before anything runs: Validate's; a *MergeError. Then Run's
// and WriteDir's (both, joined, when the partial report cannot be
// written either).
func RunInto(ctx context.Context, o Options, dir string, merge bool) (rep *Report, ran []string, err error) {
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	var older *Report
	if merge {
		if older, err = ReadReport(dir); err != nil {
			return nil, nil, &MergeError{err}
		}
	}
	rep, runErr := Run(ctx, o)
	if rep == nil {
		return nil, nil, runErr
	}
	if ran = rep.Ran(); len(ran) == 0 {
		return nil, nil, runErr
	}
	if older != nil {
		rep.Merge(older)
	}
	return rep, ran, errors.Join(runErr, rep.WriteDir(dir))
}

// WriteSummary writes a run's summary: a line naming the suites ran,
// the run's wall time and the report file in dir, then each goal of the
// report, "  [MET] GOAL: MEASURED". Errors: w's.
func (r *Report) WriteSummary(w io.Writer, ran []string, dir string) error {
	_, err := fmt.Fprintf(w, "bench: %s in %s; report in %s\n", strings.Join(ran, ", "), r.Wall.Round(time.Second), filepath.Join(dir, ReportFile))
	for _, g := range r.Goals {
		if err == nil {
			_, err = fmt.Fprintf(w, "  [%s] %s: %s\n", g.Met, g.Goal, g.Measured)
		}
	}
	return err
}
