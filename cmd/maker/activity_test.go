package main

import (
	"context"
	"errors"
	"github.com/mdap-go/mdap/maker"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStepActivity(t *testing.T) {
	var a stepActivity
	assert.True(t, a.Add(maker.SampleEvent{Step: 11}))
	assert.True(t, a.Add(maker.SampleEvent{Step: 11, Flag: maker.ErrCutOff}))
	assert.True(t, a.Add(maker.SampleEvent{Step: 11, Flag: maker.ErrCutOff}))
	assert.True(t, a.Add(maker.SampleEvent{Step: 11, Err: errors.New("503")}))
	assert.False(t, a.Add(maker.SampleEvent{Step: 11, Err: context.Canceled}), "a sample the decided race no longer needed")
	assert.Equal(t, "step 12: 4 samples, 1 valid, flagged: cut off 2, 1 error", a.String())
	a.Add(maker.SampleEvent{Step: 12})
	assert.Equal(t, "step 13: 1 sample, 1 valid", a.String(), "a new step starts over")
}
