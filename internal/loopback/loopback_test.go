package loopback

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.9.8.7": true, "::1": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false, "localhost.example.com": false,
	} {
		assert.Equal(t, want, Host(host), "%q", host)
	}
}
