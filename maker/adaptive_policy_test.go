package maker_test

import (
	"regexp"
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
	base, err := maker.AdaptiveK{Target: 0.95, Steps: 255}.WithDefaults()
	require.NoError(t, err)
	was := maker.Settings{KAuto: &base}
	same := base
	assert.Empty(t, was.Diff(maker.Settings{KAuto: &same}))
	for name, change := range map[string]func(*maker.AdaptiveK){
		"target=0.99":     func(a *maker.AdaptiveK) { a.Target = 0.99 },
		"steps=256":       func(a *maker.AdaptiveK) { a.Steps = 256 },
		"floor=3":         func(a *maker.AdaptiveK) { a.Floor = 3 },
		"max=20":          func(a *maker.AdaptiveK) { a.Max = 20 },
		"confidence=0.99": func(a *maker.AdaptiveK) { a.Confidence = 0.99 },
		"window=400":      func(a *maker.AdaptiveK) { a.Window = 400 },
	} {
		now := base
		change(&now)
		diff := was.Diff(maker.Settings{KAuto: &now})
		if assert.Len(t, diff, 1, name) {
			assert.Contains(t, diff[0], "k_auto: ", name)
			assert.Regexp(t, `, auto\(.*\b`+regexp.QuoteMeta(name)+`[ )]`, diff[0], "%s: the new value named", name)
		}
	}
}
