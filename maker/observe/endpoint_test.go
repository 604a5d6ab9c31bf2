package observe_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestEndpointServesWithItsTokenUntilClosed: the metrics need the token,
// /readyz reports the probes until Close, and Close stops the server.
func TestEndpointServesWithItsTokenUntilClosed(t *testing.T) {
	ctx := context.Background()
	ep, err := observe.Open(ctx, observe.EndpointConfig{Service: "test", Addr: "127.0.0.1:0", Token: "s3cret-token"})
	require.NoError(t, err)
	base := "http://" + ep.Addr()
	assert.Equal(t, 401, get(t, base+"/metrics", ""))
	assert.Equal(t, 200, get(t, base+"/metrics", "s3cret-token"))
	assert.Equal(t, 200, get(t, base+"/readyz", "s3cret-token"))
	ep.Ready.Add(observe.Probe{Name: "engine", Check: func(context.Context) error { return net.ErrClosed }})
	assert.Equal(t, 503, get(t, base+"/readyz", "s3cret-token"), "a failing probe added to Ready")
	require.NotNil(t, ep.Telemetry.Registry, "metrics on with an address")

	ep.Close(ctx)
	require.ErrorIs(t, ep.Ready.Check(ctx), observe.ErrEnded)
	_, err = net.DialTimeout("tcp", ep.Addr(), time.Second)
	assert.Error(t, err, "the endpoint is closed")
}

func TestEndpointWithoutAnAddressServesNothing(t *testing.T) {
	ep, err := observe.Open(context.Background(), observe.EndpointConfig{})
	require.NoError(t, err)
	assert.Empty(t, ep.Addr())
	assert.Nil(t, ep.Telemetry.Registry, "metrics off")
	ep.Close(context.Background())
}

// TestEndpointIsClosedToOtherHostsWithoutAToken: secure by default; an
// address other machines reach needs a token.
func TestEndpointIsClosedToOtherHostsWithoutAToken(t *testing.T) {
	for _, c := range []struct {
		cfg   observe.EndpointConfig
		field string
	}{
		{observe.EndpointConfig{Addr: "0.0.0.0:0"}, "Addr"},
		{observe.EndpointConfig{Addr: ":0"}, ""}, // a port alone is loopback: accepted
		{observe.EndpointConfig{Addr: "127.0.0.1:0", Token: "a b"}, "Token"},
		{observe.EndpointConfig{Linger: -time.Second}, "Linger"},
		{observe.EndpointConfig{Linger: time.Second}, "Linger"}, // nothing to keep serving
	} {
		ep, err := observe.Open(context.Background(), c.cfg)
		if c.field == "" {
			require.NoError(t, err, "%+v", c.cfg)
			ep.Close(context.Background())
			continue
		}
		require.ErrorIs(t, err, observe.ErrConfig, "%+v", c.cfg)
		fe := fielderr.As(err)
		require.NotNil(t, fe)
		assert.Equal(t, c.field, fe.Fields[0].Name)
		assert.NotContains(t, err.Error(), "a b", "a refused token is not echoed")
	}
}

func TestEndpointListenErrorIsErrListen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, err = observe.Open(context.Background(), observe.EndpointConfig{Addr: ln.Addr().String()})
	assert.ErrorIs(t, err, observe.ErrListen)
	assert.NotErrorIs(t, err, observe.ErrConfig)
}

// TestEndpointLingerEndsWithTheContext: Close keeps serving for Linger,
// but no longer than its context lasts.
func TestEndpointLingerEndsWithTheContext(t *testing.T) {
	ep, err := observe.Open(context.Background(), observe.EndpointConfig{Addr: "127.0.0.1:0", Linger: time.Minute})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	ep.Close(ctx)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, "it lingered until the context ended")
}

func TestEnvSecretsAreTheExportersHeaderValues(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS":        "Authorization=Bearer abc123, x-team = blue ,empty=,novalue",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=k-987",
		"OTEL_SERVICE_NAME":                 "not-a-secret",
	}
	got := observe.EnvSecrets(func(k string) string { return env[k] })
	assert.Equal(t, []string{"Bearer abc123", "blue", "k-987"}, got)
	assert.Empty(t, observe.EnvSecrets(func(string) string { return "" }))
}

// TestEndpointIsNotReadyWhileItLingers: once Close is called the run has
// ended, so /readyz answers 503 through the linger (docs/observe.md),
// while /metrics still serves the final totals.
func TestEndpointIsNotReadyWhileItLingers(t *testing.T) {
	ep, err := observe.Open(context.Background(), observe.EndpointConfig{Addr: "127.0.0.1:0", Token: "s3cret-token", Linger: time.Minute})
	require.NoError(t, err)
	base := "http://" + ep.Addr()
	require.Equal(t, 200, get(t, base+"/readyz", "s3cret-token"))
	ctx, cancel := context.WithCancel(context.Background())
	closed := make(chan struct{})
	go func() { ep.Close(ctx); close(closed) }()
	require.Eventually(t, func() bool { return get(t, base+"/readyz", "s3cret-token") == 503 }, 5*time.Second, 10*time.Millisecond,
		"/readyz still 200 while the ended run lingers")
	assert.Equal(t, 200, get(t, base+"/metrics", "s3cret-token"), "the last scrape still sees the totals")
	cancel()
	<-closed
}
