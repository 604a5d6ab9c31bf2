package simserver

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPrefixCacheDefaultsAreOpenAIs covers docs/cost.md:130-132: serve-sim
// "keeps a prefix cache with OpenAI's published rules by default
// (--cache-min-tokens 1024, --cache-block-tokens 128, --cache-entries 65536
// least recently used, --cache-ttl 5m)". The zero Billing (the flags'
// defaults are its Default constants) caches nothing under 1024 tokens,
// hits in 128-token blocks beyond, keeps a prefix idle 5 minutes and not
// longer, and holds 65536 prefixes before the least recently used goes.
func TestPrefixCacheDefaultsAreOpenAIs(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	c := newPrefixCache(Billing{})
	c.now = func() time.Time { return now }
	tok := func(s string) int { return (len(s) + 3) / 4 }

	under := strings.Repeat("a", 4*1023)
	c.lookup(under, tok(under))
	assert.Zero(t, c.lookup(under, tok(under)), "1023 tokens: never cached")

	long := strings.Repeat("b", 4*1300) // cacheable: 1024, 1152, 1280
	c.lookup(long, tok(long))
	assert.Equal(t, 1280, c.lookup(long, tok(long)), "1024 plus whole blocks of 128")
	other := long[:4*1151] + strings.Repeat("c", 4*200) // shares 1151 tokens
	assert.Equal(t, 1024, c.lookup(other, tok(other)), "a shared prefix short of a block: the minimum only")

	now = now.Add(5 * time.Minute)
	assert.Equal(t, 1280, c.lookup(long, tok(long)), "idle 5 minutes: still cached")
	now = now.Add(5*time.Minute + time.Second)
	assert.Zero(t, c.lookup(long, tok(long)), "idle past 5 minutes: evicted")

	// Entries: prompts of exactly 1024 tokens are one prefix each.
	lru := newPrefixCache(Billing{})
	buf := []byte(strings.Repeat("d", 4*1024))
	prompt := func(i int) string {
		binary.BigEndian.PutUint64(buf, uint64(i))
		return string(buf)
	}
	const entries = 65536
	for i := range entries {
		lru.lookup(prompt(i), 1024)
	}
	assert.Equal(t, 1024, lru.lookup(prompt(0), 1024), "65536 prefixes fit; the first is now the most recent")
	lru.lookup(prompt(entries), 1024) // one more: the least recently used, prompt 1, goes
	assert.Zero(t, lru.lookup(prompt(1), 1024), "the 65537th prefix evicts the least recently used")
	// That miss cached prompt 1 again and evicted prompt 2; 3 is still in.
	assert.Equal(t, 1024, lru.lookup(prompt(3), 1024))
}
