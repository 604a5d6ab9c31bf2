package adaptive_test

import (
	"encoding/json"
	"github.com/mdap-go/mdap/maker/adaptive"
	"regexp"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptiveKEveryPolicyFieldIsCompared covers docs/calibrate.md:192-195:
// "The journal records the policy (target, steps, floor, max, confidence,
// window) in place of a fixed k: resuming with another ... is refused".
// A resume is refused when Settings.Diff is not empty; a change of any one
// of the six fields makes it name k_auto and the new value, and the same
// policy makes it empty.
func TestAdaptiveKEveryPolicyFieldIsCompared(t *testing.T) {
	base, err := adaptive.Policy{Target: 0.95, Steps: 255}.WithDefaults()
	require.NoError(t, err)
	// The record as Policy.Record makes it, without its checks (some
	// changes below are not valid policies: Diff compares them all).
	record := func(a adaptive.Policy) json.RawMessage {
		b, err := json.Marshal(a)
		require.NoError(t, err)
		return b
	}
	was := maker.Settings{KAuto: record(base)}
	same := base
	assert.Empty(t, was.Diff(maker.Settings{KAuto: record(same)}))
	for name, change := range map[string]func(*adaptive.Policy){
		"target=0.99":     func(a *adaptive.Policy) { a.Target = 0.99 },
		"steps=256":       func(a *adaptive.Policy) { a.Steps = 256 },
		"floor=3":         func(a *adaptive.Policy) { a.Floor = 3 },
		"max=20":          func(a *adaptive.Policy) { a.Max = 20 },
		"confidence=0.99": func(a *adaptive.Policy) { a.Confidence = 0.99 },
		"window=400":      func(a *adaptive.Policy) { a.Window = 400 },
	} {
		now := base
		change(&now)
		diff := was.Diff(maker.Settings{KAuto: record(now)})
		if assert.Len(t, diff, 1, name) {
			assert.Contains(t, diff[0], "k_auto: ", name)
			// Settings built by hand have no policy to describe their
			// records: the JSON names them (TestAdaptiveKJournalRecordsThePolicy checks
			// the policy's own words in a refused resume).
			field := `"` + strings.Replace(name, "=", `":`, 1)
			assert.Regexp(t, `, \{.*`+regexp.QuoteMeta(field)+`[,}].* now$`, diff[0], "%s: the new value named", name)
		}
	}
}
