package maker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeaderSettingsThatDoNotParseAreCorrupt: a header whose "settings"
// do not decode as maker.Settings is corruption (journal.ErrCorrupt), as
// before the journal kept them as raw JSON, not a mismatch that advises
// resuming "with the settings of the first run", which no settings could
// satisfy (review6). The journal here is unsigned and its chain
// recomputed, as a careless tool or a forger of an unsigned journal
// would leave it.
func TestHeaderSettingsThatDoNotParseAreCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	lines := finished(t, path, 3, journal.Unsigned())
	require.Contains(t, lines[0], `"settings":{`)
	i := strings.Index(lines[0], `"settings":{`) + len(`"settings":`)
	depth, end := 0, i
	for ; end < len(lines[0]); end++ {
		if lines[0][end] == '{' {
			depth++
		} else if lines[0][end] == '}' {
			if depth--; depth == 0 {
				end++
				break
			}
		}
	}
	lines[0] = lines[0][:i] + `"not settings"` + lines[0][end:]
	require.NoError(t, os.WriteFile(path, []byte(reseal(t, lines, nil)), 0o600))

	_, _, err := chainOutcome(t, path, journal.Unsigned())
	require.Error(t, err)
	assert.ErrorIs(t, err, journal.ErrCorrupt, "a header that does not parse is corruption, as before the move: %v", err)
	assert.NotErrorIs(t, err, journal.ErrMismatch, "no settings given at resume can match it: %v", err)
}

// TestSettingsDiffNamesExtras: a resume names each caller setting (Extra)
// that differs: set on one side only, or to another value; equal ones are
// not named.
func TestSettingsDiffNamesExtras(t *testing.T) {
	was := Settings{Extra: map[string]string{"gone": "a", "changed": "b", "same": "c"}}
	now := Settings{Extra: map[string]string{"changed": "B", "same": "c", "new": "d"}}
	assert.Equal(t, []string{
		`changed: "b" in the journal, "B" now`,
		`gone: "a" in the journal, not set now`,
		`new: not set in the journal, "d" now`,
	}, was.Diff(now))
	assert.Empty(t, was.Diff(was))
}
