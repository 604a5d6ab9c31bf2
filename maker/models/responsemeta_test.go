package models_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestResponseMetaFromTheReply: what langchaingo does not expose of a
// reply, its id and the model that answered, is read from the body as it
// passes (the GenAI conventions' gen_ai.response.id and .model), with the
// reasoning tokens langchaingo does report, for OpenAI and Anthropic.
func TestResponseMetaFromTheReply(t *testing.T) {
	openai := strings.Replace(openaiCompletion, `"id":"x","object":"chat.completion",`, `"id":"chatcmpl-abc123","object":"chat.completion","created":1,"model":"gpt-test-2025-01-01",`, 1)
	anthropic := `{"id":"msg_01XYZ","type":"message","role":"assistant","model":"claude-test-20250101","content":[{"type":"text","text":"move = [1, 0, 2]"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":6}}`
	for _, c := range []struct {
		spec, body, id, model string
		reasoning             bool
	}{
		{"openai:gpt-test", openai, "chatcmpl-abc123", "gpt-test-2025-01-01", true},
		{"anthropic:claude-test", anthropic, "msg_01XYZ", "claude-test-20250101", false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(c.body))
		}))
		m, err := models.Open(c.spec, models.Options{BaseURL: srv.URL + "/v1", APIKey: "k", Timeout: 5 * time.Second})
		require.NoError(t, err)
		resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
		srv.Close()
		require.NoError(t, err, c.spec)
		info := resp.Choices[0].GenerationInfo
		assert.Equal(t, c.id, info[maker.InfoResponseID], c.spec)
		assert.Equal(t, c.model, info[maker.InfoResponseModel], c.spec)
		if c.reasoning {
			assert.Equal(t, 2, info["ReasoningTokens"], c.spec)
		}
	}
}

// TestResponseMetaReadsOnlyTheTopLevel: an "id" or "model" inside a value
// (a tool call's id) is not the response's; a head cut short gives what
// came before the cut.
func TestResponseMetaReadsOnlyTheTopLevel(t *testing.T) {
	id, model := models.ResponseMeta([]byte(`{"choices":[{"id":"inner","model":"inner"}],"model":"outer","id":"top"}`))
	assert.Equal(t, "top", id)
	assert.Equal(t, "outer", model)
	id, model = models.ResponseMeta([]byte(`{"id":"top","choices":[{"message":"cut sho`))
	assert.Equal(t, "top", id)
	assert.Empty(t, model)
	id, model = models.ResponseMeta([]byte(`not json`))
	assert.Empty(t, id+model)
}
