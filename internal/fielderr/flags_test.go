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
