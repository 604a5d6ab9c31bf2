package simserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/httpbound"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
)

// TestDefaultBoundsAsDocumented covers docs/servesim.md ("## Bounds"): serve-sim
// "is bounded by default ...: request headers within 10 s and at most
// 16 KiB of them ... and a whole
// request within 60 s, a response within 10 minutes, idle connections kept
// 2 minutes; at most 1,024 connections open ... and 256 requests handled
// at once". The mechanisms are tested in internal/httpbound (TestCaps) and
// by the flood test, each with small caps of its own; this checks the
// defaults a zero Config.Bounds takes (Serve applies
// Bounds.WithDefaults(DefaultBounds)) and that Server puts the timeouts on
// the http.Server.
func TestDefaultBoundsAsDocumented(t *testing.T) {
	t.Parallel()
	want := httpbound.Limits{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      10 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxConns:          1024,
		MaxInFlight:       256,
		MaxHeaderBytes:    16 << 10,
	}
	assert.Equal(t, want, simserver.Bounds{}.WithDefaults(simserver.DefaultBounds))
	srv := simserver.Bounds{}.WithDefaults(simserver.DefaultBounds).Server(http.NotFoundHandler())
	assert.Equal(t, [4]time.Duration{10 * time.Second, 60 * time.Second, 10 * time.Minute, 2 * time.Minute},
		[4]time.Duration{srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout})
	assert.Equal(t, 16<<10, srv.MaxHeaderBytes)
}
