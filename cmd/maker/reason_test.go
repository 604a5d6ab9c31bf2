package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"

	"github.com/mdap-go/mdap/maker/models"
)

// The advice to declare tools in the prompt follows a server's refusal of
// native tools, wrapped as the step loop wraps it; another refusal, or
// the refusal's words without its kind, gets none. (Over --nats the kind
// crosses the wire: cluster's TestAWorkersErrorKeepsItsKindAcrossTheWire.)
func TestNoteToolsRefused(t *testing.T) {
	t.Parallel()
	refusal := func(body string) error {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(body))
		}))
		defer srv.Close()
		m, err := models.Open("openai:tiny", models.Options{BaseURL: srv.URL + "/v1"})
		require.NoError(t, err)
		_, err = m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
		require.Error(t, err)
		return err
	}
	tools := refusal(`{"error":{"message":"registry.ollama.ai/library/tiny:latest does not support tools"}}`)
	other := refusal(`{"error":{"message":"This model's maximum context length is 8192 tokens."}}`)
	for name, c := range map[string]struct {
		err    error
		advice bool
	}{
		"refused":         {fmt.Errorf("step 0: %w", tools), true},
		"another refusal": {other, false},
		"its words only":  {errors.New(tools.Error()), false},
	} {
		var out bytes.Buffer
		noteToolsRefused(&out, &c.err)
		if c.advice {
			assert.Contains(t, out.String(), "--tool-declaration prompt", name)
		} else {
			assert.Empty(t, out.String(), name)
		}
	}
}
