package observe_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthenticatedLetsOnlyTheTokenIn(t *testing.T) {
	h, err := observe.Authenticated(observe.Handler(nil), "s3cret")
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, path, auth string) int {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
		}
		return resp.StatusCode
	}
	for _, path := range []string{"/metrics", "/readyz", "/nope", "/healthz/"} {
		assert.Equal(t, 401, do("GET", path, ""), path)
		assert.Equal(t, 401, do("GET", path, "Bearer s3cre"), path)
		assert.Equal(t, 401, do("GET", path, "Bearer s3cret2"), path)
		assert.Equal(t, 401, do("GET", path, "Basic s3cret"), path)
	}
	assert.Equal(t, 200, do("GET", "/metrics", "Bearer s3cret"))
	assert.Equal(t, 200, do("GET", "/readyz", "Bearer s3cret"))
	assert.Equal(t, 200, do("GET", "/healthz", ""))
	assert.Equal(t, 200, do("HEAD", "/healthz", ""))
	assert.Equal(t, 401, do("POST", "/healthz", ""), "only a probe's GET and HEAD are open")
}

func TestCheckTokenRefusesWhatCannotBeAHeader(t *testing.T) {
	for _, bad := range []string{"", "a b", "tab\there", "new\nline", "é", strings.Repeat("x", 4097)} {
		assert.ErrorIs(t, observe.CheckToken(bad), observe.ErrToken, "%q", bad)
		_, err := observe.Authenticated(observe.Handler(nil), bad)
		assert.ErrorIs(t, err, observe.ErrToken)
	}
	assert.NoError(t, observe.CheckToken(strings.Repeat("x", 4096)))
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"9464": true, ":9464": true, "127.0.0.1:9464": true, "127.3.2.1:1": true, "[::1]:9464": true,
		"localhost:9464": true, "LOCALHOST:1": true,
		"0.0.0.0:9464": false, "[::]:9464": false, "10.0.0.1:9464": false, "example.com:9464": false,
	} {
		got, err := observe.Loopback(addr)
		require.NoError(t, err, addr)
		assert.Equal(t, want, got, addr)
	}
	_, err := observe.Loopback("a:b:c")
	assert.ErrorIs(t, err, observe.ErrAddr)
}
