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

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/models"
)

// The advice to declare tools in the prompt follows a server's refusal of
// native tools whether the run called the model itself or a worker did
// over --nats, where the error crosses the wire as its text
// (cluster.ErrRemote, the chain lost); another refusal gets none.
func TestNoteToolsRefusedLocalAndRemote(t *testing.T) {
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
	// As SampleReply.response rebuilds a worker's error from its text.
	remote := func(err error) error { return fmt.Errorf("%w: tiny (worker w1): %s", cluster.ErrRemote, err.Error()) }
	for name, c := range map[string]struct {
		err    error
		advice bool
	}{
		"local":          {fmt.Errorf("step 0: %w", tools), true},
		"remote":         {fmt.Errorf("step 0: %w", remote(tools)), true},
		"local, other":   {other, false},
		"remote, other":  {remote(other), false},
		"not the remote": {errors.New(tools.Error()), false},
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
