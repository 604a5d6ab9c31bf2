package observe_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadiness(t *testing.T) {
	var r observe.Readiness
	ctx := context.Background()
	assert.NoError(t, r.Check(ctx), "the zero value is ready")
	var ran []string
	r.Add(observe.Probe{Name: "model", Check: func(context.Context) error { ran = append(ran, "model"); return nil }})
	assert.NoError(t, r.Check(ctx))
	r.Add(observe.Probe{Name: "engine", Check: func(context.Context) error { ran = append(ran, "engine"); return errors.New("not connected") }})
	r.Add(observe.Probe{Name: "journal", Check: func(context.Context) error { ran = append(ran, "journal"); return errors.New("closed") }})
	ran = nil
	err := r.Check(ctx)
	assert.EqualError(t, err, "engine: not connected\njournal: closed")
	assert.Equal(t, []string{"model", "engine", "journal"}, ran, "every probe, in the order added")
	r.End()
	ran = nil
	assert.ErrorIs(t, r.Check(ctx), observe.ErrEnded)
	assert.Empty(t, ran, "an ended process runs no probe")
}

func TestReadinessServedWhileProbesAreAdded(t *testing.T) {
	var r observe.Readiness
	srv := httptest.NewServer(observe.Handler(nil, observe.Probe{Name: "ready", Check: r.Check}))
	defer srv.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 50 {
			r.Add(observe.Probe{Name: "p", Check: func(context.Context) error { return nil }})
		}
	})
	for range 20 {
		resp, err := http.Get(srv.URL + "/readyz")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	wg.Wait()
	r.End()
	resp, err := http.Get(srv.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

func TestDialProbe(t *testing.T) {
	ctx := context.Background()
	assert.NoError(t, observe.DialProbe("")(ctx), "no URL: the provider's default server, not probed")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted := make(chan struct{}, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	assert.NoError(t, observe.DialProbe("http://"+addr+"/v1")(ctx))
	<-accepted
	require.NoError(t, ln.Close())
	err = observe.DialProbe("http://" + addr + "/v1")(ctx)
	assert.ErrorContains(t, err, "model server "+addr+" not reachable")
	assert.ErrorContains(t, observe.DialProbe("/v1")(ctx), "has no host")
	assert.ErrorContains(t, observe.DialProbe("http://%zz")(ctx), "has no host")
}
