package adaptive_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigNamesThePolicyFields: a Policy set as maker.Config.AdaptiveK
// is checked by Config.Validate, its refused fields named by their path
// in the Config.
func TestConfigNamesThePolicyFields(t *testing.T) {
	require.NoError(t, maker.Config{Vote: vote.Config{MaxSamples: 30}, AdaptiveK: &adaptive.Policy{Target: 0.95, Steps: 7}}.Validate())
	for _, c := range []struct {
		cfg    maker.Config
		fields []string
		value  any
		fix    string
	}{
		{maker.Config{AdaptiveK: &adaptive.Policy{Target: 1, Steps: 7}}, []string{"AdaptiveK.Target"}, 1.0, "below 1"},
		{maker.Config{AdaptiveK: adaptive.Policy{Target: 0.9, Steps: 7, Floor: 1}}, []string{"AdaptiveK.Floor"}, 1, "at least 2"},
		{maker.Config{AdaptiveK: &adaptive.Policy{Target: 0.9, Steps: 7, Confidence: 0.8}}, []string{"AdaptiveK.Confidence", "AdaptiveK.Target"}, 0.8, "above Target"},
		{maker.Config{Vote: vote.Config{MaxSamples: 10}, AdaptiveK: &adaptive.Policy{Target: 0.9, Steps: 7}}, []string{"Vote.MaxSamples", "AdaptiveK.Max"}, 10, "cannot hold a race"},
	} {
		name := strings.Join(c.fields, "+")
		err := c.cfg.Validate()
		require.Error(t, err, name)
		assert.ErrorIs(t, err, maker.ErrConfig, name)
		var fe *maker.FieldError
		require.True(t, errors.As(err, &fe), "%s: %v is a field error", name, err)
		assert.Equal(t, "maker.Config", fe.Config, name)
		var got []string
		for _, f := range fe.Fields {
			got = append(got, f.Name)
		}
		assert.Equal(t, c.fields, got, name)
		assert.Equal(t, c.value, fe.Fields[0].Value, name)
		assert.Contains(t, fe.Remedy(), c.fix, name)
	}
}
