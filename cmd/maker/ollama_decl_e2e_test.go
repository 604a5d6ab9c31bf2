//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestLog is a logging reverse proxy on loopback: it keeps the body of
// every chat request on its way to the server.
type requestLog struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newRequestLog(t *testing.T, target string) *requestLog {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	l := &requestLog{}
	rp := httputil.NewSingleHostReverseProxy(u)
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat") || strings.HasSuffix(r.URL.Path, "/chat/completions") {
			b, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
			r.Body.Close()
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
			l.mu.Lock()
			l.bodies = append(l.bodies, b)
			l.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(l.Close)
	return l
}

// received decodes every logged request: the tools declared natively
// (name to argument names) and the system text.
func (l *requestLog) received(t *testing.T) (natives []map[string][]string, systems []string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.bodies {
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name       string `json:"name"`
					Parameters struct {
						Properties map[string]any `json:"properties"`
					} `json:"parameters"`
				} `json:"function"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(b, &req), "%s", b)
		tools := map[string][]string{}
		for _, tl := range req.Tools {
			for arg := range tl.Function.Parameters.Properties {
				tools[tl.Function.Name] = append(tools[tl.Function.Name], arg)
			}
		}
		natives = append(natives, tools)
		sys := ""
		for _, m := range req.Messages {
			if m.Role == "system" {
				sys += contentText(m.Content)
			}
		}
		systems = append(systems, sys)
	}
	return natives, systems
}

// declaredToolsE2E (a subtest of TestOllamaE2E) runs the two-tool
// find-version task against the tiny real model: through Ollama's OpenAI endpoint the request
// carries the tools natively (auto) or in the prompt; through the native
// API, in the prompt. The tiny model cannot use them: the run must end
// honestly, exit 1 with the step undecided or the server's refusal said,
// never a made-up state.
func declaredToolsE2E(t *testing.T, base, name string) {
	for _, c := range []struct {
		spec, url, mode string
		native, prompt  bool
	}{
		{"openai:" + name, "/v1", "auto", true, false},
		{"openai:" + name, "/v1", "prompt", false, true},
		{"ollama:" + name, "", "auto", false, true},
	} {
		t.Run(c.spec+" "+c.mode, func(t *testing.T) {
			proxy := newRequestLog(t, base)
			cmd := start(t, nil, "run", specFile(t, "find-version.json"), "--model", c.spec, "--base-url", proxy.URL+c.url,
				"--tool-declaration", c.mode, "--k", "2", "--max-samples", "4", "--max-tokens", "24", "--json", "--progress", "off")
			code := cmd.wait(t, 3*time.Minute)
			var s specSummary
			require.NoError(t, json.Unmarshal(cmd.stdout.Bytes(), &s), "stdout %q, stderr %q", cmd.stdout.String(), cmd.stderr.String())
			t.Logf("%s --tool-declaration %s: exit %d, %d steps, %d samples: %d valid, %d flagged %v, %d errors; %s", c.spec, c.mode, code, s.Steps, s.Samples, s.Valid, s.Flagged, s.Flags, s.Errors, s.Error)
			natives, systems := proxy.received(t)
			require.NotEmpty(t, natives, "the server received the calls")
			for i := range natives {
				if c.native {
					assert.ElementsMatch(t, []string{"path", "offset", "limit"}, natives[i]["read_file"], "request %d declares read_file's arguments", i)
					assert.Contains(t, natives[i]["grep"], "pattern", "request %d", i)
					assert.Contains(t, natives[i]["grep"], "paths", "request %d", i)
				} else {
					assert.Empty(t, natives[i], "request %d: no native tools", i)
				}
				assert.Equal(t, c.prompt, strings.Contains(systems[i], "\n- grep: ") && strings.Contains(systems[i], "  pattern (string, required)") &&
					strings.Contains(systems[i], "\n- read_file: ") && strings.Contains(systems[i], "  path (string, required)"), "request %d: declared in the prompt", i)
			}
			// Honest: the tiny model tells stories; the step is never
			// decided on a made-up state, and the run says why it failed.
			assert.Equal(t, 1, code, cmd.stderr.String())
			assert.False(t, s.Solved)
			assert.Zero(t, s.Steps, "no step decided")
			assert.NotEmpty(t, s.Error)
			assert.JSONEq(t, `{"version":null,"file":null}`, string(s.State), "the state is the initial one")
			if c.native {
				// Ollama refuses native tools for a model whose template
				// has none: a permanent error, said at once.
				assert.Contains(t, s.Error, "tools")
				if strings.Contains(s.Error, "does not support tools") {
					assert.Contains(t, cmd.stderr.String(), "--tool-declaration prompt", "maker says what to do")
				}
			}
		})
	}
}
