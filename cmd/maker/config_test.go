package main

import (
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigFlagOfNamesRealFlags: every maker.Config field the run flags
// set maps to a flag maker run takes, so a refused setting is said in a
// flag the user can change.
func TestConfigFlagOfNamesRealFlags(t *testing.T) {
	t.Parallel()
	run := newRun()
	for field, name := range configFlagOf {
		assert.NotNil(t, run.Flags().Lookup(name), "%s: --%s is not a flag of maker run", field, name)
	}
}

// TestSolverSettingsErrorsNameTheFlag: maker.Config.Validate's field
// errors, as the run flags' solver reports them, name the flag, its value
// and the library's fix.
func TestSolverSettingsErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  maker.Config
		want string
	}{
		{maker.Config{AdaptiveK: &adaptive.Policy{Target: 0.95, Steps: 7, Floor: 1}}, "--k-floor 1: use at least 2"},
		{maker.Config{Vote: vote.Config{MaxSamples: 10}, AdaptiveK: &adaptive.Policy{Target: 0.95, Steps: 7}}, "--max-samples 10 plus --k-max 30: --max-samples cannot hold a race at --k-max"},
		{maker.Config{MaxSteps: -1}, "--max-steps -1: use 1 or more"},
		{maker.Config{ToolDeclaration: "sideways"}, `--tool-declaration "sideways": `},
		{maker.Config{Escalation: &maker.Escalation{Policy: "shout"}}, `--escalate "shout": use "raise-k"`},
		{maker.Config{Temperature: func(int) float64 { return 0 }, Settings: map[string]string{"x": "y"}, Timeout: -1}, "settings: invalid configuration: maker.Config: Timeout = -1ns"},
	} {
		err := fieldUsageErr(c.cfg.Validate(), configFlagOf, "settings")
		require.Error(t, err, c.want)
		assert.True(t, isUsage(err), "%v is a usage error (exit 2)", err)
		assert.Contains(t, err.Error(), c.want)
	}
}
