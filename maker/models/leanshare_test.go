package models

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestLeanRequestsShareTheTemplateSafely: the direct path's requests
// share the template's URL and header map (lean.go's request), which is
// safe only while nothing on the way writes them. Many calls at once,
// over HTTP/1.1 and HTTP/2 (TLS) and through an HTTP proxy with
// credentials, a third of them redirected (307, the
// body sent again from GetBody through http.Client), through the
// observing transport: under -race a write by net/http to the shared
// header or URL is a reported race, and without it the template must be
// what it was.
func TestLeanRequestsShareTheTemplateSafely(t *testing.T) {
	for _, how := range []string{"http/1.1", "http/2", "via a proxy"} {
		h2, proxied := how == "http/2", how == "via a proxy"
		t.Run(how, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				b, _ := io.ReadAll(req.Body)
				if want := (req.ProtoMajor == 2); want != h2 {
					http.Error(w, "proto "+req.Proto, http.StatusBadRequest)
					return
				}
				if proxied != (req.Header.Get("Proxy-Authorization") != "") {
					http.Error(w, "proxy authorization", http.StatusBadRequest)
					return
				}
				if len(b) == 0 || req.Header.Get("Authorization") != "Bearer k" || req.Header.Get("Content-Type") != "application/json" {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				if req.URL.Path == "/v1/chat/completions" && n.Add(1)%3 == 0 {
					http.Redirect(w, req, "/v2/chat/completions", http.StatusTemporaryRedirect)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, leanCompletion)
			}))
			srv.EnableHTTP2 = h2
			var base *http.Transport
			target := ""
			if proxied {
				// The server is its own forward proxy: the requests
				// name another host, go to it through the proxy with
				// the proxy's credentials (a header the transport adds).
				srv.Start()
				base = http.DefaultTransport.(*http.Transport).Clone()
				proxy, err := url.Parse(srv.URL)
				require.NoError(t, err)
				proxy.User = url.UserPassword("u", "p")
				base.Proxy = http.ProxyURL(proxy)
				target = "http://model.invalid"
			} else {
				srv.StartTLS()
				base = srv.Client().Transport.(*http.Transport).Clone()
				base.ForceAttemptHTTP2 = h2
				target = srv.URL
			}
			defer srv.Close()
			defer base.CloseIdleConnections()

			l := newLeanChat(&transport{base: base}, 0, target+"/v1", "k", "m", false)
			require.True(t, l.direct)
			wantURL, wantHeader := *l.tmpl.URL, l.tmpl.Header.Clone()
			msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
			var wg sync.WaitGroup
			errs := make(chan error, 16*12)
			for range 16 {
				wg.Go(func() {
					for range 12 {
						ctx, _ := withCall(context.Background())
						resp, err := l.generate(ctx, msgs, llms.CallOptions{Temperature: 1})
						if err == nil && resp.Choices[0].Content != "move = [1, 0, 2]" {
							err = fmt.Errorf("content %q", resp.Choices[0].Content)
						}
						if err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				assert.NoError(t, err)
			}
			assert.GreaterOrEqual(t, n.Load(), int32(16*12*2/3), "requests to /v1")
			assert.Equal(t, wantURL, *l.tmpl.URL, "the template's URL")
			assert.Equal(t, wantHeader, l.tmpl.Header, "the template's header")
			assert.Equal(t, target+"/v1/chat/completions", l.tmpl.URL.String())
		})
	}
}
