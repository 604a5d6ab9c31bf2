package maker_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestConfigZeroValueIsValid(t *testing.T) {
	require.NoError(t, maker.Config{}.Validate())
	ok := maker.Config{Vote: vote.Config{K: 5, MaxSamples: 30}, MaxTokens: 1, Timeout: time.Second, MaxSteps: 1,
		SamplesPerCall: maker.SamplesPerCallAuto, ToolDeclaration: maker.DeclareBoth,
		AdaptiveK:  stubPolicy{max: 8},
		Escalation: &maker.Escalation{Policy: maker.EscalateRaiseK}, Price: maker.Price{InputPerMillion: 1}}
	require.NoError(t, ok.Validate())
}

// TestConfigValidateNamesTheField checks that each refused setting comes
// back as one *maker.FieldError of maker.Config naming the field by its
// path, with its value and a fix.
func TestConfigValidateNamesTheField(t *testing.T) {
	for _, c := range []struct {
		cfg    maker.Config
		fields []string
		value  any
		fix    string
	}{
		{maker.Config{Vote: vote.Config{K: -1}}, []string{"Vote.K"}, -1, ""},
		{maker.Config{Vote: vote.Config{K: 5, MaxSamples: 4}}, []string{"Vote.MaxSamples"}, 4, "at least K (5)"},
		{maker.Config{MaxTokens: -1}, []string{"MaxTokens"}, -1, "0 for DefaultMaxTokens"},
		{maker.Config{MaxTokens: maker.MaxReplyBytes + 1}, []string{"MaxTokens"}, maker.MaxReplyBytes + 1, "use 1 to 1048576"},
		{maker.Config{Timeout: -time.Second}, []string{"Timeout"}, -time.Second, "positive duration"},
		{maker.Config{MaxSteps: -3}, []string{"MaxSteps"}, -3, "0 for no limit"},
		{maker.Config{SamplesPerCall: -2}, []string{"SamplesPerCall"}, -2, "SamplesPerCallAuto"},
		{maker.Config{ToolDeclaration: "sideways"}, []string{"ToolDeclaration"}, "sideways", "use auto, native, prompt or both"},
		{maker.Config{Price: maker.Price{OutputPerMillion: -1}}, []string{"Price.OutputPerMillion"}, -1.0, "0 or more"},
		{maker.Config{Price: maker.Price{InputPerMillion: math.NaN()}}, []string{"Price.InputPerMillion"}, nil, "finite"},
		{maker.Config{Price: maker.Price{CacheWritePerMillion: math.Inf(1)}}, []string{"Price.CacheWritePerMillion"}, math.Inf(1), "finite"},
		{maker.Config{AdaptiveK: stubPolicy{err: fielderr.New("stub", "Target", 1.0, "use below 1")}}, []string{"AdaptiveK.Target"}, 1.0, "below 1"},
		{maker.Config{Vote: vote.Config{MaxSamples: 10}, AdaptiveK: stubPolicy{max: 30}}, []string{"Vote.MaxSamples", "AdaptiveK.Max"}, 10, "cannot hold a race"},
		{maker.Config{AdaptiveK: stubPolicy{max: vote.MaxK + 1}}, []string{"Vote.K"}, vote.MaxK + 1, ""},
		{maker.Config{AdaptiveK: (*stubPolicy)(nil)}, []string{"AdaptiveK"}, "*maker_test.stubPolicy(nil)", "leave AdaptiveK nil for a fixed k"},
		{maker.Config{Escalation: &maker.Escalation{Policy: "shout"}}, []string{"Escalation.Policy"}, "shout", `use "raise-k"`},
		{maker.Config{Escalation: &maker.Escalation{Policy: maker.EscalateRaiseK, K: -1}}, []string{"Escalation.K"}, -1, "0 (twice the step's k)"},
		{maker.Config{Escalation: &maker.Escalation{Policy: maker.EscalateModel}}, []string{"Escalation.Model"}, nil, "needs a Model"},
		{maker.Config{Escalation: &maker.Escalation{Policy: maker.EscalateRaiseK, K: vote.MaxK + 1}}, []string{"Escalation.K"}, vote.MaxK + 1, "to 1000"},
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
		if c.value != nil {
			assert.Equal(t, c.value, fe.Fields[0].Value, name)
		}
		assert.Contains(t, fe.Remedy(), c.fix, name)
		assert.True(t, strings.HasPrefix(err.Error(), "invalid configuration: maker.Config: "+c.fields[0]+" = "), "%s: %v says where it comes from", name, err)
	}
}

// TestSolveRefusesAnInvalidConfigFirst: Solve returns Validate's error
// before it calls the model.
func TestSolveRefusesAnInvalidConfigFirst(t *testing.T) {
	task, err := hanoi.New(2)
	require.NoError(t, err)
	calls := 0
	m := maker.ModelFunc(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		calls++
		return nil, errors.New("not to be called")
	})
	s := &maker.Solver{Config: maker.Config{MaxSteps: -1}, Model: m}
	_, err = s.Solve(context.Background(), task)
	assert.Equal(t, s.Config.Validate(), err)
	assert.Zero(t, calls, "no model call")
}

// stubPolicy is a KPolicy whose Check returns max and err: the seam's
// checks, without a real policy.
type stubPolicy struct {
	max int
	err error
}

func (p stubPolicy) Check() (int, error)                    { return p.max, p.err }
func (p stubPolicy) Record() (json.RawMessage, error)       { return json.RawMessage(`{}`), nil }
func (p stubPolicy) Describe(record json.RawMessage) string { return string(record) }
func (p stubPolicy) Start(maker.Task, any) (maker.KPlanner, error) {
	return nil, errors.New("stubPolicy does not plan")
}
