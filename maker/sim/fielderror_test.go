package sim_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateNamesTheFieldAndTheFix checks that every refusal of
// Validate is a FieldError naming the field, its value and the fix: what
// a command needs to say the same in terms of its own flags.
func TestValidateNamesTheFieldAndTheFix(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		cfg   sim.Config
		names []string
		value any // of the first field
		fix   string
	}{
		{sim.Config{P: 1.5}, []string{"P"}, 1.5, "use a probability above 0, up to 1"},
		{sim.Config{P: -0.1}, []string{"P"}, -0.1, "use a probability above 0, up to 1"},
		{sim.Config{P: 0.5, FlagRate: 1.1}, []string{"FlagRate"}, 1.1, "use a probability 0 to 1"},
		{sim.Config{P: 0.5, ErrorRate: -0.1}, []string{"ErrorRate"}, -0.1, "use a probability 0 to 1"},
		{sim.Config{P: 0.5, Concentration: 2}, []string{"Concentration"}, 2.0, "use a probability 0 to 1"},
		{sim.Config{P: 0.5, HardAgree: 2}, []string{"HardAgree"}, 2.0, "use a probability 0 to 1"},
		{sim.Config{P: 0.5, DifficultySpread: 1}, []string{"DifficultySpread"}, 1.0, "use 0 (no spread) up to but not including 1"},
		{sim.Config{P: 0.5, Drift: []sim.PChange{{Step: 0, P: 0.5}}}, []string{"Drift[0].Step"}, 0, "use a step of 1 or more (changes go in increasing order from step 1)"},
		{sim.Config{P: 0.5, Drift: []sim.PChange{{Step: 4, P: 0.5}, {Step: 4, P: 0.6}}}, []string{"Drift[1].Step"}, 4, "use a step of 5 or more (changes go in increasing order from step 1)"},
		{sim.Config{P: 0.5, Drift: []sim.PChange{{Step: 4, P: 1.5}}}, []string{"Drift[0].P"}, 1.5, "use a probability above 0, up to 1"},
		{sim.Config{P: 0.5, FlagRate: 0.7, ErrorRate: 0.4}, []string{"FlagRate", "ErrorRate"}, 0.7, "must add up to at most 1"},
		{sim.Config{P: 0.5, WrongAnswers: -1}, []string{"WrongAnswers"}, -1, "use 0 or more (0 and 1: every wrong reply alike)"},
		{sim.Config{P: 0.5, Flags: sim.FlagMix{Malformed: -1}}, []string{"Flags.Malformed"}, -1.0, "use a finite weight of 0 or more"},
		{sim.Config{P: 0.5, Latency: sim.FixedLatency(-time.Millisecond)}, []string{"Latency"}, -time.Millisecond, "must be 0 (none) or positive"},
		{sim.Config{P: 0.5, Latency: sim.UniformLatency(-time.Second, time.Second)}, []string{"Latency.Min"}, -time.Second, "must be 0 (none) or positive"},
		{sim.Config{P: 0.5, Latency: sim.UniformLatency(2*time.Second, time.Second)}, []string{"Latency.Min"}, 2 * time.Second, "must be at most Latency.Max (1s)"},
		{sim.Config{P: 0.5, Latency: sim.LognormalLatency(0, 0.5)}, []string{"Latency.Sigma"}, nil, ""}, // Clause: "needs Latency.Median (the median)"
		{sim.Config{P: 0.5, Latency: sim.LognormalLatency(-time.Second, 0.5)}, []string{"Latency.Median"}, -time.Second, "must be positive"},
		{sim.Config{P: 0.5, Latency: sim.LognormalLatency(0, nan)}, []string{"Latency.Sigma"}, nan, "use a finite number of 0 (fixed latency) or more"},
		{sim.Config{P: 0.5, Latency: sim.LognormalLatency(time.Second, math.Inf(1))}, []string{"Latency.Sigma"}, math.Inf(1), "use a finite number of 0 (fixed latency) or more"},
		{sim.Config{P: 0.5, Latency: sim.LognormalLatency(time.Second, 1).Capped(-time.Second)}, []string{"Latency.Max"}, -time.Second, "must be 0 (no cap) or positive"},
	} {
		err := c.cfg.Validate()
		var fe *sim.FieldError
		require.True(t, errors.As(err, &fe), "%+v: %v", c.cfg, err)
		require.ErrorIs(t, err, sim.ErrConfig)
		names := make([]string, len(fe.Fields))
		for i, f := range fe.Fields {
			names[i] = f.Name
		}
		assert.Equal(t, c.names, names, "%+v", c.cfg)
		if v, ok := c.value.(float64); ok && math.IsNaN(v) {
			assert.True(t, math.IsNaN(fe.Fields[0].Value.(float64)), "%+v", c.cfg)
		} else {
			assert.Equal(t, c.value, fe.Fields[0].Value, "%+v", c.cfg)
		}
		assert.Equal(t, c.fix, fe.Fix, "%+v", c.cfg)
		assert.NotContains(t, err.Error(), "set P", "only a P of 0 (a Config left zero) is told to set P")
	}
	// The edges that are allowed.
	for _, cfg := range []sim.Config{
		{P: 1, FlagRate: 1},
		{P: 1, ErrorRate: 1, Concentration: 1, HardAgree: 1},
		{P: 0.5, FlagRate: 0.25, ErrorRate: 0.75, WrongAnswers: 0},
		{P: 0.5, Drift: []sim.PChange{{Step: 1, P: 1}, {Step: 2, P: 0.5}}},
		{P: 0.5, Latency: sim.FixedLatency(0)},
		{P: 0.5, Latency: sim.UniformLatency(0, 0)},
		{P: 0.5, Latency: sim.LognormalLatency(time.Nanosecond, 0).Capped(0)},
	} {
		assert.NoError(t, cfg.Validate(), "%+v", cfg)
	}
}

func TestFieldErrorText(t *testing.T) {
	err := sim.Config{P: 0.5, FlagRate: 0.7, ErrorRate: 0.4}.Validate()
	assert.EqualError(t, err, "invalid configuration: sim.Config: FlagRate = 0.7 plus ErrorRate = 0.4: must add up to at most 1")
	err = sim.Config{P: 0.5, HardAgree: 2}.Validate()
	assert.EqualError(t, err, "invalid configuration: sim.Config: HardAgree = 2: use a probability 0 to 1")
	err = sim.Config{}.Validate()
	var fe *sim.FieldError
	require.ErrorAs(t, err, &fe, "the zero P's hint wraps the FieldError")
	assert.Equal(t, "P", fe.Fields[0].Name)
	assert.EqualError(t, err, "invalid configuration: sim.Config: P = 0: use a probability above 0, up to 1; set P to the probability that a valid reply is right (DefaultConfig has the paper's 0.9978)")
}

// With Err set, the error wraps Err, not sim.ErrConfig, and reads Err's
// text first: another package's configuration reports its fields so.
func TestFieldErrorOfAnotherSentinel(t *testing.T) {
	other := errors.New("invalid limits")
	err := error(&sim.FieldError{Err: other, Fields: []sim.Field{{Name: "RPM", Value: -1}}, Fix: "use 0 or more"})
	assert.EqualError(t, err, "invalid limits: RPM = -1: use 0 or more", "no Config: no where")
	assert.ErrorIs(t, err, other)
	assert.NotErrorIs(t, err, sim.ErrConfig)
}

// Every package's ErrConfig is the one sentinel: a configuration error of
// another package is found with sim.ErrConfig, and its text says where it
// comes from.
func TestOneConfigurationSentinel(t *testing.T) {
	assert.Same(t, sim.ErrConfig, maker.ErrConfig)
	assert.Same(t, sim.ErrConfig, vote.ErrConfig)
	err := sim.Config{P: 2}.Validate()
	var fe *maker.FieldError
	require.ErrorAs(t, err, &fe, "sim.FieldError is maker.FieldError")
	assert.Equal(t, "sim.Config", fe.Config)
}
