package maker

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
)

// A step's record keeps at most journal.MaxRecordedSamples samples, the first by
// index, and counts the rest; a red flag's reason is cut to
// journal.MaxFlagReason bytes at a rune boundary.
func TestRecordedSamplesAreBounded(t *testing.T) {
	var tally modelTally
	tally.keep = true
	tally.reset(1)
	n := journal.MaxRecordedSamples + 7
	long := strings.Repeat("é", journal.MaxFlagReason) // 2 bytes a rune
	for i := range n {
		s := vote.Sample[intent.Output]{Key: 5}
		if i == 3 {
			s = vote.Sample[intent.Output]{Flag: ErrFormat}
		}
		tally.record(i, s, errors.New(long), "")
	}
	tally.counted(0, n, nil, 0)
	got, more := tally.samples(5)
	require.Len(t, got, journal.MaxRecordedSamples)
	assert.Equal(t, 7, more)
	assert.Equal(t, journal.MaxRecordedSamples-1, got[len(got)-1].Index, "the first, by index")
	flag := got[3].Flag
	assert.LessOrEqual(t, len(flag), journal.MaxFlagReason)
	assert.True(t, utf8.ValidString(flag))
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(flag, "…")))
	assert.Empty(t, got[0].Class, "a vote for the winner leaves its class out")
}
