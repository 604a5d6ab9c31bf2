package cluster_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// refusing fails every call with err, a real provider error.
type refusing struct {
	name string
	err  error
}

func (r refusing) Identity() string { return "refusing:" + r.name }

func (r refusing) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, r, prompt, opts...)
}

func (r refusing) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return nil, r.err
}

// providerRefusal is the error an openai: model gets from a server
// answering 400 with body.
func providerRefusal(t *testing.T, body string) error {
	t.Helper()
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

// A worker's refusal of native tools reaches the coordinator as
// models.ErrToolsUnsupported (errors.Is), as a local run's does, inside
// ErrRemote (never permanent) and with the worker's words; another
// refusal does not.
func TestAWorkersErrorKeepsItsKindAcrossTheWire(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 30 * time.Second})
	for name, c := range map[string]struct {
		body  string
		tools bool
	}{
		"tools":   {`{"error":{"message":"registry.ollama.ai/library/tiny:latest does not support tools"}}`, true},
		"context": {`{"error":{"message":"This model's maximum context length is 8192 tokens."}}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			m := refusing{name, providerRefusal(t, c.body)}
			require.Equal(t, c.tools, errors.Is(m.err, models.ErrToolsUnsupported))
			_, wjs := connect(t, srv.ClientURL())
			runWorker(t, newWorker(t, wjs, m, cluster.WorkerConfig{}))
			remote, err := d.Model(m.Identity())
			require.NoError(t, err)
			_, err = remote.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
			require.ErrorIs(t, err, cluster.ErrRemote)
			assert.NotErrorIs(t, err, maker.ErrPermanent, "another worker's model may serve the step")
			assert.Equal(t, c.tools, errors.Is(err, models.ErrToolsUnsupported), "%v", err)
			assert.Contains(t, err.Error(), m.err.Error())
		})
	}
}
