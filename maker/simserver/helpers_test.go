package simserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/openai" // openai:
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// serve starts a Server for cfg on a loopback httptest server and returns
// it with its base URL (ending in /v1). Cleanup releases hanging requests
// before the httptest server waits for them.
func serve(t testing.TB, cfg simserver.Config) (*simserver.Server, string) {
	t.Helper()
	s, err := simserver.New(cfg)
	require.NoError(t, err)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(s.Close) // runs first
	return s, hs.URL + "/v1"
}

// hanoiConfig is a server for the hanoi task with sim config c.
func hanoiConfig(c sim.Config) simserver.Config {
	return simserver.Config{Oracle: hanoi.Oracle{}, Sim: c}
}

// mixed is a sim config whose replies vary: right, wrong, red-flagged and
// provider errors.
func mixed(seed uint64) sim.Config {
	return sim.Config{Seed: seed, P: 0.6, WrongAnswers: 4, FlagRate: 0.2, ErrorRate: 0.05}
}

// client is langchaingo's OpenAI client for the server at base, as mdap
// builds it for --model openai:sim --base-url base.
func client(t testing.TB, base string, timeout time.Duration) llms.Model {
	t.Helper()
	m, err := models.Open("openai:sim", models.Options{BaseURL: base, Timeout: timeout})
	require.NoError(t, err)
	return m
}

// firstStep is the first step's messages of an n-disk hanoi task.
func firstStep(t testing.TB, n int) []llms.MessageContent {
	t.Helper()
	task, err := hanoi.New(n)
	require.NoError(t, err)
	return task.Messages()
}

// wire is the OpenAI request body of msgs, as plain JSON.
func wire(msgs []llms.MessageContent) []map[string]any {
	roles := map[llms.ChatMessageType]string{llms.ChatMessageTypeSystem: "system", llms.ChatMessageTypeHuman: "user", llms.ChatMessageTypeAI: "assistant"}
	var out []map[string]any
	for _, m := range msgs {
		out = append(out, map[string]any{"role": roles[m.Role], "content": m.Parts[0].(llms.TextContent).Text})
	}
	return out
}

// post sends body (marshalled unless it is []byte or string) to path and
// returns the status, headers and decoded JSON body (nil if not JSON).
func post(t testing.TB, url string, body any) (int, http.Header, map[string]any) {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		var err error
		b, err = json.Marshal(v)
		require.NoError(t, err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if json.Unmarshal(raw, &out) != nil {
		out = nil
	}
	return resp.StatusCode, resp.Header, out
}

// get fetches url and decodes its JSON body.
func get(t testing.TB, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// errorOf returns the OpenAI error object of a body, failing if it has
// not that shape.
func errorOf(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	require.True(t, ok, "an OpenAI error body: %v", body)
	require.IsType(t, "", e["message"])
	require.IsType(t, "", e["type"])
	require.Contains(t, e, "param")
	require.Contains(t, e, "code")
	return e
}
