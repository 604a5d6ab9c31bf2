package journal

import (
	"cmp"
	"fmt"

	"github.com/mdap-go/mdap/internal/buildinfo"
)

// This file pins a journal's replay to the code that decided it, as
// Temporal's GetVersion pins a workflow's: a resume replays the recorded
// winners and decides the steps after them with this build, so a build
// that would decide those steps differently, or a task whose rules
// changed, must not go on with a journal begun under other rules.

// DecisionVersion numbers the rules by which this build decides a step
// from the same samples: the prompts of the built-in tasks, parsing and
// healing of replies, vote keys, red flags, the vote. A change to any of
// them that can change a winner raises it; a journal begun under another
// DecisionVersion is refused on resume (ErrMismatch) with a message
// naming both, and a note of what changed (decisionChanges). Version 4
// journals record it; one written before this field (version 3) was
// decided under version 1, and recorded no task version (it is taken as
// begun under the task's current one).
const DecisionVersion = 1

// decisionChanges says, for each DecisionVersion after the first, what
// changed in the decisions: the refusal quotes it.
var decisionChanges = map[int]string{}

// mdapVersion returns the version of the mdap module this program was
// built with, as Go's build information records it ("(devel)" for a
// build from a work tree), or "unknown".
func mdapVersion() string { return buildinfo.Module("github.com/mdap-go/mdap") }

// versionDiff says what differs between the versions a journal was begun
// under and this build's, for the task's version tv; nil when a resume
// decides by the same rules.
func (h *Header) versionDiff(tv string) []string {
	var diff []string
	decisions := h.Decisions
	if h.Version == journalVersion3 {
		decisions = 1
	}
	if decisions != DecisionVersion {
		d := fmt.Sprintf("mdap's decision rules: version %d (mdap %s) in the journal, version %d (mdap %s) in this build", decisions, cmp.Or(h.Mdap, "unknown"), DecisionVersion, mdapVersion())
		for v := decisions + 1; v <= DecisionVersion; v++ {
			if c, ok := decisionChanges[v]; ok {
				d += fmt.Sprintf("; version %d: %s", v, c)
			}
		}
		diff = append(diff, d)
	}
	if h.Version != journalVersion3 && h.TaskVersion != tv {
		diff = append(diff, fmt.Sprintf("the task's version: %s in the journal, %s now", quoteOrNone(h.TaskVersion), quoteOrNone(tv)))
	}
	return diff
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}
