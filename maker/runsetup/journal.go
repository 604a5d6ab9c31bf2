package runsetup

import (
	"errors"
	"os"

	"github.com/mdap-go/mdap/maker"
)

// Journal is how a run opens its journal file.
type Journal struct {
	// Path is the journal file; empty: no journal.
	Path string
	// Resume opens the journal to resume its run; else it is created,
	// and an existing file is refused (maker.CreateJournal).
	Resume bool
	// ResumeOrStart resumes when Path exists and creates it when it does
	// not (one command line for a supervisor); it replaces Resume.
	ResumeOrStart bool
	// Unsigned writes (or resumes) the journal without signing it
	// (maker.JournalUnsigned).
	Unsigned bool
}

// Open opens the journal: nil, and no error, without a Path; created, or
// resumed as Resume and ResumeOrStart say. torn is the length of a torn
// last line a crash left, which the journal dropped (its step is decided
// again): worth telling the user.
//
// Errors: maker.CreateJournal's and maker.OpenJournal's (a file that
// exists or does not, a journal of another task or settings, a corrupt
// chain), as they are. Cost: one read of the journal to resume.
func (j Journal) Open() (journal *maker.Journal, torn int, err error) {
	if j.Path == "" {
		return nil, 0, nil
	}
	resume := j.Resume
	if j.ResumeOrStart {
		_, serr := os.Stat(j.Path)
		resume = !errors.Is(serr, os.ErrNotExist)
	}
	var opts []maker.JournalOption
	if j.Unsigned {
		opts = append(opts, maker.JournalUnsigned())
	}
	if resume {
		journal, err = maker.OpenJournal(j.Path, opts...)
	} else {
		journal, err = maker.CreateJournal(j.Path, opts...)
	}
	if err != nil {
		return nil, 0, err
	}
	return journal, journal.TornBytes(), nil
}
