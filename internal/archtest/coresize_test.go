package archtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// coreGoal is issue #36's size of a core a library user reads in an
// afternoon: at most this many non-test lines.
const coreGoal = 12000

// coreCeiling is the most non-test lines the core may have now: the size
// it has come down to, lowered with each cut until it reaches coreGoal,
// so that what moved out does not creep back. The journal's move into a
// package of its own (maker/journal) added the API the step loop uses it
// through (Run, Check, Begin, Step, Pending, Replay, Checkpoint): 51
// lines, most of them its documentation. Refusing a header whose
// settings do not parse as corruption again (review6: the move had made
// it a mismatch) took 9. Package docs that restated their functions'
// contracts, and a second race built twice, went (coreslim7: 13,006);
// then ClassesIn and ClassesInContext became one ClassesIn(ctx, ...) (12,985),
// and ArgLine one Sprintf (12,975); KRecord went, a k policy's record is
// its JSON (12,935); judge and judgeKeyed became one judge (12,922);
// intent's package doc left its errors to errors.go (12,916), executor's
// Register and Normalize to their own docs (12,908). The red-flag alarm
// and the write rule became doubts of a decided race, decided again by
// one mechanism (reconsider) as an escalated step is (12,907).
// executor.ObservationError, which only tests called, went with the four
// sentinels only it wrapped (12,866).
// categories.Glossary and Term, exported for a test only, became the
// unexported table the note is made from (12,859).
// vote.RaceMatching and Classify(Match) went: RaceChoosing takes a Match
// through FirstMatch, and Classify takes a Choose (12,834). intent's two
// tests of a bare intent (over a map, over keys) became one (12,814).
// maker.Settings.String, which nothing called, went, and Diff words an
// Extra's three cases in one line (12,803). maker.Drawn embeds the
// Judgement whose fields it restated (12,795). Escalation, WriteRule and
// FlagAlarm name their fields from maker.Config, as within made them
// anyway (12,783). journal.WithKey, which only tests used, went: a key
// is KeyEnv's or the state folder's (12,768). intent's kind names are a
// table (12,755). The file journal (Create, Open, the flock and the torn
// tail) became the satellite maker/journalfile, a journal.Store built on
// journal.New like maker/cluster's (12,435). The 404 diagnosis's model
// list GET (Conn.List, Provider.ListKey, the probe client) went to
// maker/models/openai, whose diagnosis and ollama's are its only callers
// (12,395). Reading a --tools list (Taxonomy.ParseSelection), which the
// step loop never does, is the satellite categories/selection (12,322).
// Solver.Draw went: a Sampler draws one sample as it draws a wave, and
// its documentation says once what a sample drawn outside a race shares
// with a run's (12,302).
// models.OpenAll, which only commands and maker/problems call, is
// maker/models/all.Open, beside the providers such callers import (12,281).
// journal.SampleRecord.ClassOf went: a voted sample's class is its Class
// or, "" meaning the winner's, the step's Key, as Class says (12,269).
// The canonical text of an intent is its object node written as any
// other (12,246).
// maker.ModelReport embeds the journal.ModelStep whose fields it
// restated, and a step's shares are added by one loop (12,236).
// journal.New builds its Journal itself, not through a helper only it
// called (12,232). A model's errors read its provider's URL and key hints
// directly, not through two one-line methods (12,228). Settings.Diff's
// union of two Extra maps copies both into a new map (12,226).
// Report.Agreement, which only maker/observe's estimate of p read, is
// that package's (12,215). Branches that restated a default or a search
// became cmp.Or and slices calls, helpers used once (union, orUnknown,
// privateState, integralCount) and responsemeta.go's file went, and docs
// that restated another's contract point to it (coretrim: 11,974).
// Normalize bounds a tool name's length before its lookup again, as the
// executor's limits promise (11,978). A provider's refusal of native
// tools became a sentinel of its own (models.ErrToolsUnsupported), which
// the CLI had told apart by the message's words (11,984).
const coreCeiling = 11984

// TestCoreSize: the core's non-test Go files (comments and blank lines
// included, as `wc -l` counts them) hold at most coreCeiling lines. A
// change that has to grow the core moves something else out first, into
// a satellite, or says in the ceiling's change why the core must grow.
func TestCoreSize(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	total := 0
	for _, p := range core {
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p), "*.go"))
		require.NoError(t, err)
		n := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			n += bytes.Count(b, []byte("\n"))
		}
		t.Logf("%-13s %6d", p, n)
		total += n
	}
	t.Logf("%-13s %6d (ceiling %d, goal %d)", "core", total, coreCeiling, coreGoal)
	require.LessOrEqual(t, total, coreCeiling, "the core grew past its ceiling: move what is not the core into a satellite (ARCHITECTURE.md, \"The core and its satellites\")")
}
