package mcpserver_test

import (
	"net/http"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPDefaultSessionCap covers docs/mcp.md:209-210: by default "at
// most 256 [sessions] are open (an initialize past it gets 503)". The
// flood test sets its own cap (64); this one keeps HTTPOptions' zero
// value: 256 initialize requests open 256 sessions, the 257th gets 503.
func TestHTTPDefaultSessionCap(t *testing.T) {
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	t.Cleanup(hc.CloseIdleConnections)
	for i := range 256 {
		code, body := post(t, hc, endpoint, initialize, nil)
		require.Equal(t, http.StatusOK, code, "session %d: %s", i+1, body)
	}
	code, body := post(t, hc, endpoint, initialize, nil)
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, "at most 256 sessions")
}
