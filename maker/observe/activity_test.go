package observe_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
)

func TestStepActivity(t *testing.T) {
	var a observe.StepActivity
	assert.True(t, a.Add(maker.SampleEvent{Step: 11}))
	assert.True(t, a.Add(maker.SampleEvent{Step: 11, Flag: maker.ErrCutOff}))
	assert.True(t, a.Add(maker.SampleEvent{Step: 11, Flag: maker.ErrCutOff}))
	assert.True(t, a.Add(maker.SampleEvent{Step: 11, Err: errors.New("503")}))
	assert.False(t, a.Add(maker.SampleEvent{Step: 11, Err: context.Canceled}), "a sample the decided race no longer needed")
	assert.Equal(t, "step 12: 4 samples, 1 valid, flagged: cut off 2, 1 error", a.String())
	a.Add(maker.SampleEvent{Step: 12})
	assert.Equal(t, "step 13: 1 sample, 1 valid", a.String(), "a new step starts over")
}

func TestSampleLineShowsTheWholeReasonOnOneLine(t *testing.T) {
	reason := "format: the answer breaks its contract: jsonschema validation failed with 'mem:///spec/answer.json#'\n- at '/state': validation failed\n  - at '/state': missing property 'file'\n- at '/done': got string, want boolean"
	got := observe.SampleLine(maker.SampleEvent{Step: 2, Index: 5, Model: "sim", Flag: maker.ErrFormat, Reason: errors.New(reason), Text: "{}"}, nil, 80)
	assert.NotContains(t, got, "\n")
	for _, w := range []string{"missing property 'file'", "at '/done': got string, want boolean", "jsonschema validation failed", "; at '/state': missing property"} {
		assert.Contains(t, got, w)
	}
	assert.True(t, strings.HasPrefix(got, `step 2 sample 5 (sim): red flag "format": format: the answer`), got)
}

// TestSampleLineRedactsBeforeItCuts: a secret the cut would split is
// redacted first, so none of it shows; the reply is cut to chars.
func TestSampleLineRedactsBeforeItCuts(t *testing.T) {
	sec := &observe.Secrets{}
	sec.Add("sk-secret-0123456789")
	text := strings.Repeat("x", 10) + "sk-secret-0123456789" + strings.Repeat("y", 100)
	got := observe.SampleLine(maker.SampleEvent{Step: 0, Index: 1, Model: "m", Flag: maker.ErrOverlong, Text: text, Usage: vote.Usage{OutputTokens: 900}}, sec, 15)
	assert.NotContains(t, got, "sk-sec")
	assert.Equal(t, `step 0 sample 1 (m): red flag "overlong": ; 900 output tokens: "xxxxxxxxxx[REDA..."`, got)
}

func TestSampleLineOfAnErrorAndOfAVote(t *testing.T) {
	assert.Equal(t, "step 3 sample 0 (openai:x): error: 503 busy",
		observe.SampleLine(maker.SampleEvent{Step: 3, Model: "openai:x", Err: errors.New("503 busy")}, nil, 80))
	assert.Empty(t, observe.SampleLine(maker.SampleEvent{Step: 3, Key: 7}, nil, 80), "a valid sample has no line")
}
