package calibrate_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// review1: the first round samples min(StepsSampled, Steps.Total()) steps
// (all of a smaller task, as StepsSampled's doc and --steps-sampled's help
// say), so with UntilDecided a MaxSamples that covers that round is a
// valid cap. Before cmdflags3 the library ran this; the rule moved into
// Validate refuses it, saying the first round is StepsSampled times
// Samples (1000 here) when it is 3 times 10.
func TestUntilDecidedCapOfASmallTaskCountsItsRealFirstRound(t *testing.T) {
	t.Parallel()
	solver := &maker.Solver{Model: numberSim(t, sim.Config{P: 0.9})}
	cfg := calibrate.Config{Steps: numbers{3}, Solver: solver, UntilDecided: true, MaxSamples: 500}
	rep, err := calibrate.Run(context.Background(), cfg)
	require.NotErrorIs(t, err, calibrate.ErrConfig, "the first round is 30 samples, within the cap of 500")
	assert.Len(t, rep.Sampled, 3, "every step of the task sampled")
}
