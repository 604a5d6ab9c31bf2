package cluster_test

import (
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
)

func TestCheckRunName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "hanoi15", "solve-3f2a9c0d1e2b", "A_b-9", strings.Repeat("x", 64)} {
		assert.NoError(t, cluster.CheckRunName(ok), ok)
	}
	for _, bad := range []string{"", strings.Repeat("x", 65), "a.b", "a b", "a*", "a>", "é", "run/1"} {
		err := cluster.CheckRunName(bad)
		assert.ErrorIs(t, err, cluster.ErrConfig, "%q", bad)
		assert.ErrorContains(t, err, "use 1 to 64 letters, digits, '-' or '_'", "%q", bad)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"nats://127.0.0.1:4222", "tls://h:1", "ws://h", "wss://h:443", "nats://a:1, nats://b:2", "nats://a:1,tls://b:2"} {
		assert.NoError(t, cluster.CheckURL(ok), ok)
	}
	for _, bad := range []string{"", "127.0.0.1:4222", "http://h:1", "nats://", "nats://a:1,", "nats://a:1,http://b", "nats://a b:1", "://h"} {
		err := cluster.CheckURL(bad)
		assert.ErrorIs(t, err, cluster.ErrConfig, "%q", bad)
		assert.ErrorContains(t, err, "want nats://HOST:PORT", "%q", bad)
	}
}
