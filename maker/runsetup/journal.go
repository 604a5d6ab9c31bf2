package runsetup

import (
	"errors"
	"os"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
)

// Journal is how a run opens its journal file and resumes from it.
type Journal struct {
	// Path is the journal file; empty: no journal.
	Path string `flag:"journal" usage:"journal FILE (or nats:RUN with --nats): one JSON line per decided step, to resume from"`
	// Resume opens the journal to resume its run; else it is created,
	// and an existing file is refused (journalfile.Create).
	Resume bool `flag:"resume" usage:"resume the run recorded in --journal"`
	// ResumeOrStart resumes when Path exists and creates it when it does
	// not (one command line for a supervisor); it replaces Resume.
	ResumeOrStart bool `flag:"resume-or-start" usage:"resume the run in --journal FILE, or start it when the file does not exist yet (one command line for a supervisor); a journal of another task or settings is still refused"`
	// Unsigned writes (or resumes) the journal without signing it
	// (journal.Unsigned).
	Unsigned bool `flag:"journal-unsigned" usage:"write (or resume) the journal without signing it: a plain SHA-256 chain and no chain head kept, so an edit whose chain was recomputed, a truncation or an older copy put back go unnoticed (see docs/journal.md)"`
	// RerunPending runs again, on Resume, a side-effect tool call the
	// journal holds pending (maker.Config.RerunPending).
	RerunPending bool `flag:"rerun-pending" usage:"on --resume, run again a side-effect tool call that was pending at the crash"`
	// PerTask says the options are those of each task's journal, which a
	// batch opens itself (maker solve): Unsigned and RerunPending then
	// need no Path or Resume.
	PerTask bool
}

// journalName is where the field errors of Journal come from.
const journalName = "runsetup.Journal"

// Validate checks which options go together: ResumeOrStart needs a file
// Path (not a nats: journal) and replaces Resume; Resume needs a Path;
// unless PerTask, Unsigned needs a Path and RerunPending Resume.
//
// Errors: a *fielderr.Error wrapping fielderr.ErrConfig whose Clause
// says the refused field's need. Cost: O(1).
func (j Journal) Validate() error {
	need := func(field, clause string) error {
		return &fielderr.Error{Config: journalName, Fields: []fielderr.Field{{Name: field}}, Clause: clause}
	}
	switch {
	case j.ResumeOrStart && (j.Resume || j.Path == "" || strings.HasPrefix(j.Path, "nats:")):
		return need("ResumeOrStart", "needs Path FILE (a file, not nats:RUN) and replaces Resume")
	case j.Resume && j.Path == "":
		return need("Resume", "needs Path FILE: the journal of the run to resume")
	case j.Unsigned && j.Path == "" && !j.PerTask:
		return need("Unsigned", "applies to Path only: it says how the journal is written")
	case j.RerunPending && !j.Resume && !j.PerTask:
		return need("RerunPending", "applies to Resume only: it finishes the pending tool call of a resumed run")
	}
	return nil
}

// Open opens the journal: nil, and no error, without a Path; created, or
// resumed as Resume and ResumeOrStart say. torn is the length of a torn
// last line a crash left, which the journal dropped (its step is decided
// again): worth telling the user.
//
// Errors: journalfile.Create's and journalfile.Open's (a file that
// exists or does not, a journal of another task or settings, a corrupt
// chain), as they are. Cost: one read of the journal to resume.
func (j Journal) Open() (jl *journal.Journal, torn int, err error) {
	if j.Path == "" {
		return nil, 0, nil
	}
	resume := j.Resume
	if j.ResumeOrStart {
		_, serr := os.Stat(j.Path)
		resume = !errors.Is(serr, os.ErrNotExist)
	}
	var opts []journal.Option
	if j.Unsigned {
		opts = append(opts, journal.Unsigned())
	}
	if resume {
		jl, err = journalfile.Open(j.Path, opts...)
	} else {
		jl, err = journalfile.Create(j.Path, opts...)
	}
	if err != nil {
		return nil, 0, err
	}
	return jl, jl.TornBytes(), nil
}
