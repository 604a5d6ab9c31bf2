package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A signed-in client's jobs go under its key; without one each Drawer
// is a key of its own, so coordinators on a server without roles (all
// named alike) do not share one bound of jobs.
func TestJobKey(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "UABC", jobKey("_INBOX_UABC"))
	assert.Equal(t, "UABC", jobKey("_INBOX_UABC.x1"))
	a, b := jobKey(""), jobKey("")
	assert.NotEqual(t, a, b, "two Drawers without a signed key")
	assert.NotEqual(t, jobKey("_INBOX_"), jobKey("_INBOX_"))
	for _, k := range []string{a, b} {
		assert.NotContains(t, k, ".", "one subject token")
	}
}
