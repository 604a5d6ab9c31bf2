package fielderr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorSaysWhereWhatAndHow(t *testing.T) {
	err := error(New("batch.LimitConfig", "RPM", -1.0, "use 0 or more"))
	assert.EqualError(t, err, "invalid configuration: batch.LimitConfig: RPM = -1: use 0 or more")
	assert.ErrorIs(t, err, ErrConfig)

	two := &Error{Fields: []Field{{"FlagRate", 0.7}, {"ErrorRate", 0.4}}, Fix: "must add up to at most 1"}
	assert.EqualError(t, two, "invalid configuration: FlagRate = 0.7 plus ErrorRate = 0.4: must add up to at most 1", "no Config: no where")
}

func TestErrorWrapsItsOwnSentinel(t *testing.T) {
	other := errors.New("invalid limits")
	err := error(&Error{Err: other, Config: "x.Config", Fields: []Field{{"RPM", -1}}, Fix: "use 0 or more"})
	assert.EqualError(t, err, "invalid limits: x.Config: RPM = -1: use 0 or more")
	assert.ErrorIs(t, err, other)
	assert.NotErrorIs(t, err, ErrConfig)
}

func TestAsFindsAWrappedError(t *testing.T) {
	fe := New("sim.Config", "P", 1.5, "use a probability above 0, up to 1")
	got := As(fmt.Errorf("simulated model: %w", fe))
	require.NotNil(t, got)
	assert.Same(t, fe, got)
	assert.Nil(t, As(errors.New("plain")))
	assert.Nil(t, As(nil))
}

func TestCauseIsFoundAndSaysTheFix(t *testing.T) {
	cause := fmt.Errorf("%w: want PROVIDER:MODEL", errors.New("invalid model spec"))
	err := error(Of("mcpserver.Config", "Models[0]", "gpt", cause))
	assert.EqualError(t, err, "invalid configuration: mcpserver.Config: Models[0] = gpt: invalid model spec: want PROVIDER:MODEL")
	assert.ErrorIs(t, err, ErrConfig)
	assert.ErrorIs(t, err, cause)
}
