package models_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/anthropic"
	"github.com/mdap-go/mdap/maker/models/ollama"
	"github.com/mdap-go/mdap/maker/models/openai"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// cleanEnv clears the environment variables Open reads.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{openai.EnvKey, openai.EnvURL, "OPENAI_API_BASE", ollama.EnvHost, anthropic.EnvKey, anthropic.EnvURL} {
		t.Setenv(k, "")
	}
}

// server is a loopback server that misbehaves like a provider. It counts
// the calls to chat endpoints.
type server struct {
	*httptest.Server
	chats atomic.Int32
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat") || strings.HasSuffix(r.URL.Path, "/chat/completions") || strings.HasSuffix(r.URL.Path, "/messages") {
			s.chats.Add(1)
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func ask(ctx context.Context, m llms.Model) (*llms.ContentResponse, error) {
	return m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.WithMaxTokens(20))
}

func open(t *testing.T, spec, base string) llms.Model {
	t.Helper()
	m, err := models.Open(spec, models.Options{BaseURL: base, Timeout: 5 * time.Second})
	require.NoError(t, err)
	return m
}

// solve runs two-disk Hanoi on m with k = 3, an error budget of 10 and a
// short backoff, and returns the report, the time it took and the error.
func solve(t *testing.T, m llms.Model) (maker.Report, time.Duration, error) {
	t.Helper()
	task, err := hanoi.New(2)
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{MaxTokens: 20, Vote: vote.Config{K: 3, MaxErrors: 10, Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}}, Model: m}
	start := time.Now()
	rep, err := s.Solve(context.Background(), task)
	return rep, time.Since(start), err
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// A permanent error stops the run at once: no more chat calls than the
// first wave (k = 3), well under a second, and a message naming the URL.
func assertStoppedAtOnce(t *testing.T, srv *server, err error, took time.Duration) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, maker.ErrPermanent)
	assert.NotErrorIs(t, err, vote.ErrTooManyErrors, "the error budget is not spent")
	assert.LessOrEqual(t, srv.chats.Load(), int32(3), "at most the first wave of calls")
	assert.Less(t, took, 3*time.Second)
	assert.Contains(t, err.Error(), srv.URL)
}

func TestUnknownModelOpenAIListsTheServersModels(t *testing.T) {
	cleanEnv(t)
	// Ollama's /v1 answers an unknown model like this.
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			writeJSON(w, 200, `{"object":"list","data":[{"id":"tiny:latest","object":"model"},{"id":"qwen3:0.6b","object":"model"}]}`)
		default:
			writeJSON(w, 404, `{"error":{"message":"model \"nosuch\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`)
		}
	})
	m := open(t, "openai:nosuch", srv.URL+"/v1")
	_, err := ask(context.Background(), m)
	assert.ErrorIs(t, err, models.ErrUnknownModel)
	assert.ErrorIs(t, err, maker.ErrPermanent)
	assert.Equal(t, `permanent provider error: unknown model: openai:nosuch at `+srv.URL+`/v1: the server has no model "nosuch" (HTTP 404: model "nosuch" not found, try pulling it first); it serves qwen3:0.6b, tiny:latest: give one as --model openai:NAME`, err.Error())
	var lerr *llms.Error
	require.ErrorAs(t, err, &lerr, "langchaingo's mapped error is kept")
	assert.Equal(t, llms.ErrCodeResourceNotFound, lerr.Code)

	srv.chats.Store(0)
	_, took, err := solve(t, m)
	assertStoppedAtOnce(t, srv, err, took)
	assert.ErrorIs(t, err, models.ErrUnknownModel)
}

func TestUnknownModelOllamaListsTheServersModels(t *testing.T) {
	cleanEnv(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/tags":
			writeJSON(w, 200, `{"models":[{"name":"tiny:latest","model":"tiny:latest"}]}`)
		default:
			writeJSON(w, 404, `{"error":"model \"nosuch\" not found, try pulling it first"}`)
		}
	})
	m := open(t, "ollama:nosuch", srv.URL)
	_, err := ask(context.Background(), m)
	assert.ErrorIs(t, err, models.ErrUnknownModel)
	assert.Contains(t, err.Error(), `ollama:nosuch at `+srv.URL+`: the Ollama server has no model "nosuch" (HTTP 404: model "nosuch" not found, try pulling it first); it has tiny:latest`)

	srv.chats.Store(0)
	_, took, err := solve(t, m)
	assertStoppedAtOnce(t, srv, err, took)

	// "tiny" is "tiny:latest": a 404 for a listed model is not "unknown".
	m = open(t, "ollama:tiny", srv.URL)
	_, err = ask(context.Background(), m)
	assert.ErrorIs(t, err, models.ErrNotFound)
	assert.NotErrorIs(t, err, models.ErrUnknownModel)
}

func TestWrongBaseURLSaysWhichFormWasMeant(t *testing.T) {
	cleanEnv(t)
	// An Ollama server: /api/* and /v1/*, nothing at the root's /chat/completions.
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			writeJSON(w, 200, `{"object":"list","data":[{"id":"tiny:latest"}]}`)
		case "/api/tags":
			writeJSON(w, 200, `{"models":[{"name":"tiny:latest"}]}`)
		default:
			w.WriteHeader(404)
			_, _ = io.WriteString(w, "404 page not found")
		}
	})
	t.Run("openai at the server root", func(t *testing.T) {
		_, err := ask(context.Background(), open(t, "openai:tiny", srv.URL))
		assert.ErrorIs(t, err, models.ErrNotFound)
		assert.ErrorIs(t, err, maker.ErrPermanent)
		assert.Contains(t, err.Error(), "HTTP 404: 404 page not found from POST "+srv.URL+"/chat/completions: openai: wants the API root with its /v1: use --base-url "+srv.URL+"/v1")
	})
	t.Run("ollama at the root of another server", func(t *testing.T) {
		other := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				writeJSON(w, 200, `{"object":"list","data":[{"id":"llama"}]}`)
				return
			}
			w.WriteHeader(404)
		})
		_, err := ask(context.Background(), open(t, "ollama:llama", other.URL))
		assert.ErrorIs(t, err, models.ErrNotFound)
		assert.Contains(t, err.Error(), "this is not an Ollama server's root (no /api/tags) but an OpenAI-compatible API ("+other.URL+"/v1): use --model openai:llama --base-url "+other.URL+"/v1")
	})
	t.Run("ollama at /v1 is refused before any call", func(t *testing.T) {
		_, err := models.Open("ollama:tiny", models.Options{BaseURL: srv.URL + "/v1"})
		assert.ErrorIs(t, err, models.ErrSpec)
		assert.Contains(t, err.Error(), "ollama: wants the server root, "+srv.URL+" (a URL ending in /v1 is the OpenAI-compatible API, for --model openai:NAME)")
	})
}

// deadURL returns a loopback URL where nothing listens.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	u := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	return u
}

func TestConnectionRefusedNamesTheURL(t *testing.T) {
	cleanEnv(t)
	dead := deadURL(t)
	for spec, base := range map[string]string{"openai:tiny": dead + "/v1", "ollama:tiny": dead} {
		m := open(t, spec, base)
		_, err := ask(context.Background(), m)
		assert.ErrorIs(t, err, models.ErrUnreachable, spec)
		assert.ErrorIs(t, err, maker.ErrPermanent, spec)
		assert.Contains(t, err.Error(), spec+" at "+base+": nothing listens there (connection refused): start the server, or point --base-url or ", spec)
		assert.NotContains(t, err.Error(), "failed to reach API server", "%s: langchaingo's sanitised message is replaced by the cause", spec)

		start := time.Now()
		rep, err := func() (maker.Report, error) { r, _, e := solve(t, m); return r, e }()
		assert.ErrorIs(t, err, models.ErrUnreachable, spec)
		assert.LessOrEqual(t, rep.Launched, 3, spec)
		assert.Less(t, time.Since(start), 3*time.Second, spec)
	}
	m := open(t, "ollama:tiny", dead)
	_, err := ask(context.Background(), m)
	assert.Contains(t, err.Error(), "OLLAMA_HOST")
}

func TestAuthErrorSaysWhichVariableToSet(t *testing.T) {
	cleanEnv(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 401, `{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`)
	})
	m := open(t, "openai:gpt-4o-mini", srv.URL+"/v1")
	_, err := ask(context.Background(), m)
	assert.ErrorIs(t, err, models.ErrAuth)
	assert.ErrorIs(t, err, maker.ErrPermanent)
	assert.True(t, llms.IsAuthenticationError(err), "langchaingo's kind is kept")
	assert.Contains(t, err.Error(), "openai:gpt-4o-mini at "+srv.URL+"/v1: HTTP 401: Incorrect API key provided")
	assert.Contains(t, err.Error(), "the server wants an API key: set OPENAI_API_KEY")

	t.Setenv(openai.EnvKey, "sk-wrong")
	_, err = ask(context.Background(), open(t, "openai:gpt-4o-mini", srv.URL+"/v1"))
	assert.Contains(t, err.Error(), "the server refused the API key from OPENAI_API_KEY: set OPENAI_API_KEY to a valid key")

	t.Setenv("MDAP_TEST_TEAM_KEY", "sk-team-wrong")
	_, err = ask(context.Background(), open(t, "openai:gpt-4o-mini;key=MDAP_TEST_TEAM_KEY", srv.URL+"/v1"))
	assert.Contains(t, err.Error(), "the server refused the API key from MDAP_TEST_TEAM_KEY: set MDAP_TEST_TEAM_KEY to a valid key", "the variable the spec names")
	m2, err := models.Open("openai:gpt-4o-mini", models.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-given"})
	require.NoError(t, err)
	_, err = ask(context.Background(), m2)
	assert.Contains(t, err.Error(), "the server refused the API key given in Options.APIKey: give a valid key")

	anth := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	})
	t.Setenv(anthropic.EnvKey, "sk-ant-wrong")
	_, err = ask(context.Background(), open(t, "anthropic:claude-3-5-haiku", anth.URL))
	assert.ErrorIs(t, err, models.ErrAuth)
	assert.Contains(t, err.Error(), "HTTP 401: invalid x-api-key: the server refused the API key from ANTHROPIC_API_KEY: set ANTHROPIC_API_KEY to a valid key")

	srv.chats.Store(0)
	_, took, err := solve(t, m)
	assertStoppedAtOnce(t, srv, err, took)
}

func TestRateLimitCarriesTheServersDelay(t *testing.T) {
	cleanEnv(t)
	var n atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "300")
			writeJSON(w, 429, `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		writeJSON(w, 200, `{"id":"x","object":"chat.completion","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	})
	m := open(t, "openai:tiny", srv.URL+"/v1")
	start := time.Now()
	_, err := ask(context.Background(), m)
	assert.Less(t, time.Since(start), time.Second, "the error comes back at once; the solver waits")
	assert.ErrorIs(t, err, models.ErrRateLimited)
	assert.NotErrorIs(t, err, maker.ErrPermanent, "transient: the vote retries")
	assert.True(t, llms.IsRateLimitError(err))
	assert.Equal(t, "rate limited: openai:tiny at "+srv.URL+"/v1: HTTP 429: Rate limit reached for requests (openai: rate_limit); the server asks for a pause of 300ms", err.Error())
	d, ok := maker.RetryAfter(err)
	assert.True(t, ok, "the solver's microagent sees the delay")
	assert.Equal(t, 300*time.Millisecond, d)
	var ra interface{ RetryAfter() time.Duration }
	require.ErrorAs(t, err, &ra, "maker/batch's shared limits see it")
	assert.Equal(t, 300*time.Millisecond, ra.RetryAfter())
	resp, err := ask(context.Background(), m)
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Choices[0].Content)

	t.Run("a delay over MaxRetryWait is permanent", func(t *testing.T) {
		later := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3600")
			writeJSON(w, 429, `{"error":{"message":"try tomorrow"}}`)
		})
		m, err := models.Open("openai:tiny", models.Options{BaseURL: later.URL + "/v1", MaxRetryWait: time.Second})
		require.NoError(t, err)
		_, err = ask(context.Background(), m)
		assert.ErrorIs(t, err, models.ErrRateLimited)
		assert.ErrorIs(t, err, maker.ErrPermanent)
		assert.Contains(t, err.Error(), "the server asks for a pause of 1h0m0s before the next call, more than 1s: try again later")
		_, ok := maker.RetryAfter(err)
		assert.False(t, ok, "nothing to wait for")
	})
	t.Run("a run spends its error budget at the server's pace", func(t *testing.T) {
		always := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After-Ms", "100")
			writeJSON(w, 429, `{"error":{"message":"Rate limit reached"}}`)
		})
		task, err := hanoi.New(2)
		require.NoError(t, err)
		s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 1, MaxErrors: 3, Backoff: time.Millisecond}}, Model: open(t, "openai:tiny", always.URL+"/v1")}
		start := time.Now()
		rep, err := s.Solve(context.Background(), task)
		assert.ErrorIs(t, err, vote.ErrTooManyErrors)
		assert.ErrorIs(t, err, models.ErrRateLimited)
		assert.Equal(t, 4, rep.Errors)
		assert.Equal(t, int32(4), always.chats.Load())
		assert.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond, "four calls, each followed by the server's 100ms: no tight loop")
	})
	t.Run("the wait honours the context", func(t *testing.T) {
		slow := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			writeJSON(w, 429, `{"error":{"message":"slow down"}}`)
		})
		task, err := hanoi.New(2)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = (&maker.Solver{Model: open(t, "openai:tiny", slow.URL+"/v1")}).Solve(ctx, task)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 3*time.Second)
	})
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2025, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"Retry-After": "Thu, 20 Nov 2025 12:00:07 GMT"}, 7 * time.Second, true},
		{map[string]string{"Retry-After": "Thu, 20 Nov 2025 11:00:00 GMT"}, 0, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{}, 0, false},
	} {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		d, ok := models.ParseRetryAfter(h, now)
		assert.Equal(t, c.ok, ok, "%v", c.header)
		assert.Equal(t, c.want, d, "%v", c.header)
	}
}

func TestQuotaAndBadRequestArePermanent(t *testing.T) {
	cleanEnv(t)
	for _, c := range []struct {
		status int
		body   string
		kind   error
		want   string
	}{
		{429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`, models.ErrQuota, "the account's quota or credit is spent; check its plan and billing"},
		{400, `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, models.ErrRequestRefused, "the server refused the request (HTTP 400: This model's maximum context length is 8192 tokens.)"},
	} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.status, c.body) })
		m := open(t, "openai:tiny", srv.URL+"/v1")
		start := time.Now()
		_, err := ask(context.Background(), m)
		assert.ErrorIs(t, err, c.kind)
		assert.ErrorIs(t, err, maker.ErrPermanent)
		assert.Contains(t, err.Error(), c.want)
		assert.Less(t, time.Since(start), time.Second)
	}
}

// A server that takes no native tool declarations for the model says so
// in a 400 (Ollama: "MODEL does not support tools", through its own API
// and its OpenAI one): ErrToolsUnsupported, a refused request, permanent,
// keeping the server's words and saying what to do instead.
func TestNativeToolsRefusedIsErrToolsUnsupported(t *testing.T) {
	cleanEnv(t)
	for spec, c := range map[string]struct{ base, body string }{
		"openai:tiny": {"/v1", `{"error":{"message":"registry.ollama.ai/library/tiny:latest does not support tools","type":"api_error"}}`},
		"ollama:tiny": {"", `{"error":"registry.ollama.ai/library/tiny:latest does not support tools"}`},
	} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusBadRequest, c.body) })
		m := open(t, spec, srv.URL+c.base)
		_, err := ask(context.Background(), m)
		assert.ErrorIs(t, err, models.ErrToolsUnsupported, spec)
		assert.ErrorIs(t, err, models.ErrRequestRefused, spec)
		assert.ErrorIs(t, err, maker.ErrPermanent, spec)
		assert.Contains(t, err.Error(), "does not support tools", spec)
		assert.Contains(t, err.Error(), "declare the tools in the prompt", spec)
	}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusBadRequest, `{"error":{"message":"This model's maximum context length is 8192 tokens."}}`)
	})
	_, err := ask(context.Background(), open(t, "openai:tiny", srv.URL+"/v1"))
	assert.NotErrorIs(t, err, models.ErrToolsUnsupported, "another refusal")
}

func TestServerErrorsAreTransientAndNameTheURL(t *testing.T) {
	cleanEnv(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 503, `{"error":{"message":"overloaded"}}`)
	})
	m := open(t, "openai:tiny", srv.URL+"/v1")
	_, err := ask(context.Background(), m)
	assert.NotErrorIs(t, err, maker.ErrPermanent)
	assert.True(t, llms.IsProviderUnavailableError(err))
	assert.Contains(t, err.Error(), "openai:tiny at "+srv.URL+"/v1: HTTP 503: overloaded")

	rep, _, err := solve(t, m)
	assert.ErrorIs(t, err, vote.ErrTooManyErrors, "transient errors spend the budget")
	assert.Equal(t, 11, rep.Errors)
}

func TestTimeoutNamesTheTimeout(t *testing.T) {
	cleanEnv(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client go
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	for spec, base := range map[string]string{"openai:tiny": srv.URL + "/v1", "ollama:tiny": srv.URL} {
		m, err := models.Open(spec, models.Options{BaseURL: base, Timeout: 100 * time.Millisecond})
		require.NoError(t, err)
		_, err = ask(context.Background(), m)
		require.Error(t, err, spec)
		assert.NotErrorIs(t, err, maker.ErrPermanent, spec)
		assert.Contains(t, err.Error(), spec+" at "+base+": no reply within --timeout 100ms", spec)
	}
}

// A key a server echoes in a long plain-text error body is redacted
// before the body is cut to its first 300 characters: no prefix of the
// key is left (here the cut would fall 8 characters into it).
func TestAnEchoedKeyIsNotCutIntoAPrefix(t *testing.T) {
	cleanEnv(t)
	const key = "sk-proj-Zq81+longer/secret=key-0042"
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, strings.Repeat("x", 292)+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+strings.Repeat(" and more", 20))
	})
	t.Setenv("MDAP_TEST_TEAM_KEY", key)
	_, err := ask(context.Background(), open(t, "openai:gpt-4o-mini;key=MDAP_TEST_TEAM_KEY", srv.URL+"/v1"))
	require.ErrorIs(t, err, models.ErrAuth)
	assert.NotContains(t, err.Error(), key[:8], "no prefix of the key")
	assert.Contains(t, err.Error(), strings.Repeat("x", 292)+"[REDACTE", "redacted, then cut")
}

// A base URL with a proxy's user:password@ is used for the requests (Go
// sends it as basic authentication when no key is set) but never shown:
// the model's identity (what a journal keeps) and its errors name the
// server without it.
func TestBaseURLUserinfoIsNeverShown(t *testing.T) {
	cleanEnv(t)
	var asked atomic.Bool
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		asked.Store(true)
		writeJSON(w, 404, `{"error":{"message":"no such model"}}`)
	})
	base := strings.Replace(srv.URL, "http://", "http://proxyuser:pw%2Bsecret@", 1) + "/v1"
	m := open(t, "openai:gpt-4o-mini", base)
	assert.Equal(t, "openai:gpt-4o-mini@"+srv.URL+"/v1", maker.ModelIdentity(m))
	_, err := ask(context.Background(), m)
	require.Error(t, err)
	assert.True(t, asked.Load(), "the request reached the server")
	assert.Contains(t, err.Error(), srv.URL+"/v1")
	assert.NotContains(t, err.Error(), "proxyuser")
	assert.NotContains(t, err.Error(), "secret")
}

// TestUnparseableBaseURLShowsNoCredential: a base URL whose password a URL
// cannot hold (here a ^) is refused, and the refusal, which is printed,
// shows the URL without its user information all the same (it used to
// quote the whole URL, password included, twice: once in url.Parse's own
// error).
func TestUnparseableBaseURLShowsNoCredential(t *testing.T) {
	for raw, host := range map[string]string{"http://us3r:p^w0rd@127.0.0.1:9/v1": "http://127.0.0.1:9/v1", "http://us3r:p^w0rd@127.0.0.1:9": "http://127.0.0.1:9", "https://us3r:p^w@d@host/v1?x": "https://host/v1?x"} {
		err := models.CheckBaseURL("openai", raw)
		require.Error(t, err, raw)
		assert.NotContains(t, err.Error(), "us3r", raw)
		assert.NotContains(t, err.Error(), "p^w", raw)
		assert.Contains(t, err.Error(), host, raw)
	}
	assert.Equal(t, "http://127.0.0.1:9/v1", models.ShownURL("http://u:p^w@127.0.0.1:9/v1"))
	assert.Equal(t, "http://127.0.0.1:9/v1", models.ShownURL("http://u:pw@127.0.0.1:9/v1"))
	assert.Equal(t, "http://127.0.0.1:9/v1", models.ShownURL("http://127.0.0.1:9/v1"))
}
