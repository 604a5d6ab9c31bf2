package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtectedResourceMetadata: a client that follows the MCP
// authorization spec reads, from the 401's WWW-Authenticate header, where
// the server describes itself (RFC 9728), and finds there that it takes a
// bearer token in the header and names no OAuth authorization server, so
// it asks its user for the token instead of starting an OAuth flow that
// cannot succeed.
func TestProtectedResourceMetadata(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{Token: "s3cret"})
	resp, err := http.Post(endpoint, "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	challenge := resp.Header.Get("WWW-Authenticate")
	require.Contains(t, challenge, `Bearer realm="mdap"`)
	_, rest, ok := strings.Cut(challenge, `resource_metadata="`)
	require.True(t, ok, "the 401 names the resource metadata: %s", challenge)
	metaURL, _, _ := strings.Cut(rest, `"`)
	origin := strings.TrimSuffix(endpoint, mcpserver.Path)
	assert.Equal(t, origin+mcpserver.ResourceMetadataPath+mcpserver.Path, metaURL)

	for _, u := range []string{metaURL, origin + mcpserver.ResourceMetadataPath} {
		resp, err := http.Get(u) // public: no token
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, u)
		var md map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&md))
		resp.Body.Close()
		assert.Equal(t, endpoint, md["resource"], u)
		assert.Equal(t, []any{"header"}, md["bearer_methods_supported"], u)
		assert.NotContains(t, md, "authorization_servers", "no OAuth server issues its tokens")
	}
}
