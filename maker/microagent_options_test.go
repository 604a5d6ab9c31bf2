package maker

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// appendingModel records each call's options as applied, after appending
// an option of its own to the slice it was given (as a wrapper might).
type appendingModel struct {
	llms.Model
	seen []llms.CallOptions
}

func (m *appendingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	opts = append(opts, llms.WithStopWords([]string{"appended"}))
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	m.seen = append(m.seen, o)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}, nil
}

// TestOneSampleOptionsAreTheSampleIndexs: the options of a one-sample
// request are those of its own index (temperature, seed, reply cap, the
// solver's options, JSON mode), call after call, and a model appending
// to the slice changes no later call's options.
func TestOneSampleOptionsAreTheSampleIndexs(t *testing.T) {
	m := &appendingModel{}
	a := &microagent{model: m, maxTokens: 99, temperature: DefaultTemperature, options: []llms.CallOption{llms.WithTopP(0.5)},
		schema: json.RawMessage(`{"type":"object"}`)}
	a.fixed = a.fixedOptions() // as newAgent does
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	var indices []int
	for round := range 3 {
		for i := range 10 {
			_, _, err := a.call(context.Background(), SampleID{Step: round, Index: i}, msgs, 1)
			require.NoError(t, err)
			indices = append(indices, i)
		}
	}
	require.Len(t, m.seen, len(indices))
	for c, o := range m.seen {
		i := indices[c]
		assert.Equal(t, DefaultTemperature(i), o.Temperature, "call %d", c)
		assert.Equal(t, i+1, o.Seed, "call %d", c)
		assert.Equal(t, 99, o.MaxTokens)
		assert.Equal(t, 0.5, o.TopP)
		assert.True(t, o.JSONMode)
		assert.Equal(t, 0, o.N)
		assert.Equal(t, []string{"appended"}, o.StopWords, "call %d: the model's own append, once", c)
	}
}
