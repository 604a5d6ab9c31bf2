package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that refuses the key and echoes it in its error (as some do,
// in part or whole) does not put the key in maker's output: not a key
// from OPENAI_API_KEY, nor one a --model ;key=VAR names, in text or JSON
// logs, the per-sample error lines, the final error or the summary.
func TestEchoedKeysAreRedactedFromTheOutput(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		name, env, model string
		extra            []string
	}{
		{"environment", "OPENAI_API_KEY", "openai:gpt-x", []string{"--log-format", "json"}},
		{"key= variable", "MDAP_TEST_TEAM_KEY", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", []string{"--log-format", "json"}},
		{"key= variable, text", "MDAP_TEST_TEAM_KEY", "openai:gpt-x;key=MDAP_TEST_TEAM_KEY", []string{"--json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const key = "sk-echoed-secret-9f3c2a71"
			args := append([]string{"hanoi", "--disks", "3", "--model", c.model, "--base-url", srv.URL + "/v1", "--verbose", "--progress", "off"}, c.extra...)
			cmd := commandWithEnv(binary, []string{c.env + "=" + key}, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			require.Error(t, err, "a refused key fails the run")
			out := stdout.String() + stderr.String()
			assert.Contains(t, out, "[REDACTED]", "the server echoed the key: %s", out)
			assert.NotContains(t, out, key)
			assert.NotContains(t, out, key[3:], "not even in part")
		})
	}
}
