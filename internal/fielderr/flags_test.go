package fielderr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInFlagsNamesTheFlagsTheirValuesAndTheFix(t *testing.T) {
	flagOf := map[string]string{"P": "p", "FlagRate": "flag-rate", "ErrorRate": "error-rate", "Models": "model", "Structured": "structured"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{New("sim.Config", "P", 1.5, "use a probability above 0, up to 1"), "--p 1.5: use a probability above 0, up to 1"},
		{fmt.Errorf("wrapped: %w", &Error{Fields: []Field{{"FlagRate", 0.7}, {"ErrorRate", 0.4}}, Fix: "must add up to at most 1"}), "--flag-rate 0.7 plus --error-rate 0.4: must add up to at most 1"},
		{Of("x", "Models[1]", "nosuch:m", errors.New(`"nosuch:m": unknown provider`)), `--model "nosuch:m": unknown provider`},
		{New("x", "Structured", nil, "applies to a real model"), "--structured: applies to a real model"},
	} {
		got, ok := InFlags(c.err, flagOf)
		assert.True(t, ok, c.want)
		assert.Equal(t, c.want, got)
	}
	for _, err := range []error{nil, errors.New("plain"), New("x", "Unknown", 1, "fix"), &Error{Fix: "no fields"}} {
		got, ok := InFlags(err, flagOf)
		assert.False(t, ok, "%v", err)
		assert.Empty(t, got)
	}
}

// A remedy that names another field of the same config says its flag:
// the text reads in flags throughout. A field of another config, or a
// word no flag sets, stays as it is.
func TestInFlagsSaysSiblingFieldsAsFlags(t *testing.T) {
	flagOf := map[string]string{"AdaptiveK.Max": "k-max", "AdaptiveK.Floor": "k-floor", "Vote.K": "k", "Vote.MaxSamples": "max-samples", "Escalation.K": "escalate-k"}
	text, ok := InFlags(New("maker.Config", "AdaptiveK.Max", 3, "use Floor (4) to 1000"), flagOf)
	assert.True(t, ok)
	assert.Equal(t, "--k-max 3: use --k-floor (4) to 1000", text)
	text, _ = InFlags(New("maker.Config", "Vote.MaxSamples", 2, "must be at least K (3), or no step could be decided"), flagOf)
	assert.Equal(t, "--max-samples 2: must be at least --k (3), or no step could be decided", text, "Vote's K, not Escalation's")
	text, _ = InFlags(New("maker.Config", "AdaptiveK.Max", 3, "use K or DefaultMax"), flagOf)
	assert.Equal(t, "--k-max 3: use K or DefaultMax", text, "K is not AdaptiveK's")
	text, _ = InFlags(New("maker.Config", "Vote.MaxSamples", 20, "Vote.MaxSamples cannot hold a race at AdaptiveK.Max: raise it"), flagOf)
	assert.Equal(t, "--max-samples 20: --max-samples cannot hold a race at --k-max: raise it", text, "a path is said as its flag")
	text, _ = InFlags(New("maker.Config", "AdaptiveK.Max", 3, "use Floor (maker --k-floor) to 1000"), flagOf)
	assert.Equal(t, "--k-max 3: use Floor (maker --k-floor) to 1000", text, "a flag the remedy names already is not said twice")
}

// A Clause follows the fields it is said of, in the Error and in flags.
func TestAClauseFollowsItsFields(t *testing.T) {
	err := &Error{Config: "runsetup.Journal", Fields: []Field{{Name: "Resume"}}, Clause: "needs Path FILE: the journal of the run to resume"}
	assert.EqualError(t, err, "invalid configuration: runsetup.Journal: Resume needs Path FILE: the journal of the run to resume")
	text, ok := InFlags(err, map[string]string{"Resume": "resume", "Path": "journal"})
	assert.True(t, ok)
	assert.Equal(t, "--resume needs --journal FILE: the journal of the run to resume", text)
}
