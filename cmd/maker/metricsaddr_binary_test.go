package main

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryTelemetryErrorsNameTheirCause: maker's telemetry is
// observe.Open's; a --metrics-addr whose port is taken names the flag, a
// telemetry variable of the environment that is not supported points at
// docs/observe.md, and both exit 2 before any step.
func TestBinaryTelemetryErrorsNameTheirCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	addr := ln.Addr().String()
	c := start(t, nil, "hanoi", "--disks", "2", "--metrics-addr", addr, "--json")
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "maker: --metrics-addr "+addr+": metrics endpoint: listen tcp "+addr)
	assert.Empty(t, c.stdout.String(), "no run, no summary")

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	c = start(t, nil, "hanoi", "--disks", "2", "--json")
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), `OTEL_EXPORTER_OTLP_PROTOCOL="grpc": only http/protobuf is built in`)
	assert.Contains(t, c.stderr.String(), "(see docs/observe.md)")
	assert.Empty(t, c.stdout.String())
}
