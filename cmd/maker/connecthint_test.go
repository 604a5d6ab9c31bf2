package main

import (
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
)

// A refused shared coordinator key (an engine upgraded to run keys, or
// started without --shared-coordinator) gets a hint naming both ways on;
// another refused credential, and an engine nobody answers, get theirs.
func TestConnectHint(t *testing.T) {
	shared := "the coordinator credential " + filepath.Join("store", "creds", "coordinator.nk")
	hint := connectHint(nats.ErrAuthorization, shared)
	assert.Contains(t, hint, "--shared-coordinator")
	assert.Contains(t, hint, "maker nats run add RUN")
	other := connectHint(nats.ErrAuthorization, "the coordinator credential "+filepath.Join("store", "creds", "runs", "a.nk"))
	assert.NotContains(t, other, "--shared-coordinator")
	assert.Contains(t, other, "--nats-creds")
	assert.Equal(t, "start one with: maker nats", connectHint(nats.ErrNoServers, shared))
}
