package mcpserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openSession sends initialize from hc and returns the new session's ID.
func openSession(t *testing.T, hc *http.Client, endpoint string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initialize))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	id := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	return id
}

// TestHTTPDefaultSessionCaps covers docs/mcp.md ("Bounds and checks of
// the HTTP server"): by default at most 256 sessions are open and 64 per
// client (remote address); a new session past a cap takes the place of
// the oldest unused one, the client's own at its cap, else the biggest
// holder's. HTTPOptions' zero value; four addresses fill the server.
func TestHTTPDefaultSessionCaps(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{NoAuth: true})
	var ids []string
	byAddr := map[string][]string{}
	for c := 1; c <= 4; c++ {
		addr := fmt.Sprintf("127.0.0.%d", c)
		hc := fromAddr(addr)
		for range 64 {
			id := openSession(t, hc, endpoint)
			ids = append(ids, id)
			byAddr[addr] = append(byAddr[addr], id)
		}
		hc.CloseIdleConnections()
	}
	hc1 := fromAddr("127.0.0.1")
	ids = append(ids, openSession(t, hc1, endpoint)) // a 65th from 127.0.0.1
	hc5 := fromAddr("127.0.0.5")
	ids = append(ids, openSession(t, hc5, endpoint)) // a 257th session
	hc1.CloseIdleConnections()
	hc5.CloseIdleConnections()

	live := map[string]bool{}
	hc := &http.Client{}
	for _, id := range ids {
		code, _ := post(t, hc, endpoint, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, map[string]string{"Mcp-Session-Id": id})
		require.Contains(t, []int{http.StatusOK, http.StatusNotFound}, code)
		live[id] = code == http.StatusOK
	}
	n := 0
	for _, ok := range live {
		if ok {
			n++
		}
	}
	assert.Equal(t, 256, n, "at most 256 sessions open")
	assert.False(t, live[byAddr["127.0.0.1"][0]], "127.0.0.1's 65th took the place of its oldest")
	assert.True(t, live[ids[len(ids)-1]], "the 257th was opened")
	closed := 0
	for _, id := range []string{byAddr["127.0.0.1"][1], byAddr["127.0.0.2"][0], byAddr["127.0.0.3"][0], byAddr["127.0.0.4"][0]} {
		if !live[id] {
			closed++
		}
	}
	assert.Equal(t, 1, closed, "the 257th took the place of the oldest session of one of the biggest holders (64 each)")
}
