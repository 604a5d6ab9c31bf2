package observe

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDialHost(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:11434/v1": "127.0.0.1:11434",
		"http://localhost/v1":       "localhost:80",
		"https://api.example/v1":    "api.example:443",
		"https://[::1]:8443":        "[::1]:8443",
		"https://[::1]/v1":          "[::1]:443",
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, want, dialHost(u), raw)
	}
}
