package simserver

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPrefixCacheRules: nothing under the minimum; a repeated prompt hits
// its longest cacheable prefix (minimum plus whole blocks); a prompt that
// shares a prefix hits the shared whole blocks only; the least recently
// used prefixes go first when the cache is full, and idle ones after the
// TTL.
func TestPrefixCacheRules(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	c := newPrefixCache(Billing{CacheMinTokens: 100, CacheBlockTokens: 10, CacheEntries: 1000, CacheTTL: time.Minute})
	c.now = func() time.Time { return now }
	tok := func(s string) int { return (len(s) + 3) / 4 }

	short := strings.Repeat("a", 4*99)
	assert.Zero(t, c.lookup(short, tok(short)))
	assert.Zero(t, c.lookup(short, tok(short)), "under the minimum: never cached")

	long := strings.Repeat("b", 4*135) // 135 tokens: cacheable 100, 110, 120, 130
	assert.Zero(t, c.lookup(long, tok(long)), "first sight: a miss")
	assert.Equal(t, 130, c.lookup(long, tok(long)), "the longest whole block")

	other := long[:4*117] + strings.Repeat("c", 4*40) // shares 117 tokens
	assert.Equal(t, 110, c.lookup(other, tok(other)), "the shared whole blocks")

	now = now.Add(2 * time.Minute)
	assert.Zero(t, c.lookup(long, tok(long)), "idle past the TTL: evicted")

	small := newPrefixCache(Billing{CacheMinTokens: 100, CacheBlockTokens: 10, CacheEntries: 4})
	a, b := strings.Repeat("x", 4*130), strings.Repeat("y", 4*130)
	small.lookup(a, tok(a)) // 4 entries
	small.lookup(b, tok(b)) // 4 more: a's are evicted
	assert.Zero(t, small.lookup(a, tok(a)), "evicted when the cache is full")
	assert.Nil(t, newPrefixCache(Billing{CacheOff: true}))
	assert.Zero(t, (*prefixCache)(nil).lookup(long, tok(long)), "off: no cached tokens")
}
