package runsetup_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSettingsValidateNamesTheFieldAtFault: what maker.Config does not
// check, each refusal naming its field.
func TestSettingsValidateNamesTheFieldAtFault(t *testing.T) {
	require.NoError(t, runsetup.DefaultSettings().Validate())
	for _, c := range []struct {
		set   func(*runsetup.Settings)
		field string
		fix   string
	}{
		{func(s *runsetup.Settings) { s.SamplesPerCall = "x" }, "SamplesPerCall", "use auto, or a number from 1 to"},
		{func(s *runsetup.Settings) { s.SamplesPerCall = "0" }, "SamplesPerCall", "from 1 to"},
		{func(s *runsetup.Settings) { s.SamplesPerCall = fmt.Sprint(maker.MaxSamplesPerCall + 1) }, "SamplesPerCall", "from 1 to"},
		{func(s *runsetup.Settings) { s.Parallel = 4 }, "Parallel", "use 1 to --k (3)"},
		{func(s *runsetup.Settings) { s.MaxErrors = -1 }, "MaxErrors", "use 0 (none tolerated) or more"},
		{func(s *runsetup.Settings) { s.Progress = "sometimes" }, "Progress", "use auto, on or off"},
	} {
		s := runsetup.DefaultSettings()
		c.set(&s)
		err := s.Validate()
		require.ErrorIs(t, err, fielderr.ErrConfig, c.field)
		assert.Equal(t, c.field, fielderr.As(err).Fields[0].Name)
		assert.Contains(t, fielderr.As(err).Remedy(), c.fix)
	}
	s := runsetup.DefaultSettings()
	s.Parallel, s.SamplesPerCall = 3, " auto"
	assert.NoError(t, s.Validate(), "k samples in flight; auto")
}

// TestMarginReadsAFixedKOrAuto: the --k flag's value, and the policy
// and bound each gives.
func TestMarginReadsAFixedKOrAuto(t *testing.T) {
	s := runsetup.DefaultSettings()
	assert.Equal(t, "3", s.Margin.String())
	assert.Nil(t, s.Adaptive(10), "a fixed k has no policy")
	assert.Equal(t, vote.DefaultK, s.KBound())
	for _, bad := range []string{"0", "x", fmt.Sprint(vote.MaxK + 1)} {
		assert.Error(t, s.Margin.Set(bad), bad)
	}
	require.NoError(t, s.Margin.Set(" 7"))
	assert.Equal(t, runsetup.Margin{K: 7}, s.Margin)
	require.NoError(t, s.Margin.Set("Auto"))
	assert.Equal(t, "auto", s.Margin.String())
	s.Target = 0.9
	assert.Equal(t, &adaptive.Policy{Target: 0.9, Floor: adaptive.DefaultFloor, Max: adaptive.DefaultMax, Steps: 10}, s.Adaptive(10))
	assert.Equal(t, adaptive.DefaultMax, s.KBound(), "auto: the largest k the policy may choose")
	s.Parallel = adaptive.DefaultMax
	assert.NoError(t, s.Validate())
	var cfg maker.Config
	s.Apply(&cfg)
	assert.Zero(t, cfg.Vote.K, "auto: no fixed margin")
}

// TestSettingsApplyMapsToTheLibrarys: a MaxErrors of 0 tolerates none,
// the escalation policy has no model, SamplesPerCall is its number.
func TestSettingsApplyMapsToTheLibrarys(t *testing.T) {
	var cfg maker.Config
	s := runsetup.DefaultSettings()
	s.Apply(&cfg)
	assert.Equal(t, vote.DefaultMaxErrors, cfg.Vote.MaxErrors)
	assert.Equal(t, maker.DefaultMaxTokens, cfg.MaxTokens)
	assert.Equal(t, 1, cfg.SamplesPerCall)
	assert.Nil(t, cfg.Escalation)

	s.MaxErrors, s.Parallel, s.MaxSamples, s.SamplesPerCall = 0, 2, 40, "auto"
	s.InputPrice, s.OutputPrice, s.Structured = 1, 2, true
	s.Escalation = runsetup.Escalation{Policy: maker.EscalateRaiseK, After: 9, K: 6, Model: "ignored"}
	s.Apply(&cfg)
	assert.Equal(t, vote.Config{K: vote.DefaultK, Parallel: 2, MaxSamples: 40, MaxErrors: vote.NoErrors}, cfg.Vote)
	assert.Equal(t, maker.SamplesPerCallAuto, cfg.SamplesPerCall)
	assert.Equal(t, &maker.Escalation{Policy: maker.EscalateRaiseK, After: 9, K: 6}, cfg.Escalation)
	assert.Equal(t, [2]float64{1, 2}, [2]float64{cfg.Price.InputPerMillion, cfg.Price.OutputPerMillion})
	assert.True(t, cfg.Structured)
}

// TestSettingsSimAddsLatencyAndDrift: the drift only when set.
func TestSettingsSimAddsLatencyAndDrift(t *testing.T) {
	s := runsetup.DefaultSettings()
	s.Latency, s.LatencySigma, s.PLate, s.PChangeAt = time.Second, 0.5, 0.8, 7
	c := s.Sim(sim.DefaultConfig())
	assert.Nil(t, c.Drift, "PLate without Drift")
	assert.Equal(t, sim.LatencyOf(time.Second, 0.5), c.Latency)
	s.Drift = true
	assert.Equal(t, []sim.PChange{{Step: 7, P: 0.8}}, s.Sim(sim.DefaultConfig()).Drift)
}

// TestSettingsUsageSaysTheDefaults: a tag cannot compute, so the usage's
// default of MaxSamples is checked against the library's.
func TestSettingsUsageSaysTheDefaults(t *testing.T) {
	f, _ := reflect.TypeFor[runsetup.Settings]().FieldByName("MaxSamples")
	assert.Contains(t, f.Tag.Get("usage"), fmt.Sprintf("(default %d*k)", vote.DefaultSamplesPerK))
}
