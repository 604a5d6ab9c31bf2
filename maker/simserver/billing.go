package simserver

import (
	"container/list"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// Billing is how the server bills, like a provider: the prompt counted
// once per request whatever n (always), a prompt prefix cache with a
// provider's rules, and hidden reasoning tokens per choice. The zero
// value has the cache on with OpenAI's rules (DefaultCacheMinTokens,
// DefaultCacheBlockTokens, DefaultCacheEntries, DefaultCacheTTL) and no
// reasoning tokens.
type Billing struct {
	// CacheOff turns the prefix cache off: cached_tokens is always 0.
	CacheOff bool `flag:"cache-off" usage:"no prompt prefix cache: cached_tokens is always 0"`
	// CacheMinTokens is the shortest prompt that is cached, in tokens
	// (four bytes a token, maker.EstimateTokens); 0 means
	// DefaultCacheMinTokens.
	CacheMinTokens int `flag:"cache-min-tokens" usage:"shortest prompt the prefix cache keeps, in tokens (OpenAI: 1024)"`
	// CacheBlockTokens is the cache's granularity beyond the minimum: a
	// hit covers MinTokens + m*BlockTokens tokens of the prompt, the
	// longest such prefix seen before; 0 means DefaultCacheBlockTokens.
	CacheBlockTokens int `flag:"cache-block-tokens" usage:"prefix cache granularity beyond the minimum, in tokens (OpenAI: 128)"`
	// CacheEntries bounds the cached prefixes (least recently used go
	// first); 0 means DefaultCacheEntries.
	CacheEntries int `flag:"cache-entries" usage:"most prefixes the cache keeps (least recently used evicted first)"`
	// CacheTTL evicts a prefix not used for that long; 0 means
	// DefaultCacheTTL.
	CacheTTL time.Duration `flag:"cache-ttl" usage:"a cached prefix unused this long is evicted"`
	// ReasoningTokens adds that many hidden reasoning tokens to each
	// choice's completion tokens (reported in
	// completion_tokens_details.reasoning_tokens, billed as output, as a
	// reasoning model does), at most the request's token cap minus the
	// reply's own tokens, so a choice never bills more than max_tokens.
	ReasoningTokens int `flag:"reasoning-tokens" usage:"hidden reasoning tokens billed as output per choice, up to the request's max_tokens (0 to 65536): reasoning-length replies"`
}

// OpenAI's published prompt caching rules: prompts of 1024 tokens or more,
// cached in 128-token increments, cleared after 5 to 10 minutes idle.
const (
	DefaultCacheMinTokens   = 1024
	DefaultCacheBlockTokens = 128
	DefaultCacheEntries     = 1 << 16
	DefaultCacheTTL         = 5 * time.Minute
	// MaxReasoningTokens bounds Billing.ReasoningTokens.
	MaxReasoningTokens = 1 << 16
)

// DefaultBilling is the zero Billing written out: the cache on with
// OpenAI's rules, no reasoning tokens.
func DefaultBilling() Billing {
	return Billing{CacheMinTokens: DefaultCacheMinTokens, CacheBlockTokens: DefaultCacheBlockTokens, CacheEntries: DefaultCacheEntries, CacheTTL: DefaultCacheTTL}
}

// Validate returns nil or a *maker.FieldError wrapping [ErrConfig] that
// names the first bad field of b ("simserver.Billing: CacheTTL = -1s"),
// its value and the fix: a negative cache setting (0 is its default), or
// ReasoningTokens outside 0 to MaxReasoningTokens. [New] calls it; a command maps the
// field names to its flags (maker serve-sim does). Cost: O(1).
func (b Billing) Validate() error {
	for _, x := range []struct {
		name  string
		value any
		bad   bool
		fix   string
	}{
		{"CacheMinTokens", b.CacheMinTokens, b.CacheMinTokens < 0, "use a positive number of tokens"},
		{"CacheBlockTokens", b.CacheBlockTokens, b.CacheBlockTokens < 0, "use a positive number of tokens"},
		{"CacheEntries", b.CacheEntries, b.CacheEntries < 0, "use a positive number of prefixes"},
		{"CacheTTL", b.CacheTTL, b.CacheTTL < 0, "use a positive duration such as 5m"},
		{"ReasoningTokens", b.ReasoningTokens, b.ReasoningTokens < 0 || b.ReasoningTokens > MaxReasoningTokens, fmt.Sprintf("use 0 to %d", MaxReasoningTokens)},
	} {
		if x.bad {
			return fielderr.New("simserver.Billing", x.name, x.value, x.fix)
		}
	}
	return nil
}

// prefixCache is a provider's prompt prefix cache: it remembers hashes of
// prompt prefixes at the cacheable lengths and answers, for a prompt, the
// longest cacheable prefix it has seen. Safe for concurrent use; memory
// O(entries).
type prefixCache struct {
	min, block, cap int
	ttl             time.Duration
	now             func() time.Time
	// seed keys the prefixes' hashes (maphash, the runtime's hash: a
	// byte-at-a-time hash of every 4 KiB prompt cost the race-built
	// tests seconds); the keys live only in this process's memory.
	seed maphash.Seed

	mu      sync.Mutex
	lru     *list.List // of *cacheEntry, most recent first
	entries map[uint64]*list.Element
}

type cacheEntry struct {
	key  uint64
	used time.Time
}

func newPrefixCache(b Billing) *prefixCache {
	if b.CacheOff {
		return nil
	}
	c := &prefixCache{min: b.CacheMinTokens, block: b.CacheBlockTokens, cap: b.CacheEntries, ttl: b.CacheTTL,
		now: time.Now, seed: maphash.MakeSeed(), lru: list.New(), entries: map[uint64]*list.Element{}}
	if c.min == 0 {
		c.min = DefaultCacheMinTokens
	}
	if c.block == 0 {
		c.block = DefaultCacheBlockTokens
	}
	if c.cap == 0 {
		c.cap = DefaultCacheEntries
	}
	if c.ttl == 0 {
		c.ttl = DefaultCacheTTL
	}
	return c
}

// lookup returns the tokens of prompt (promptTokens of them) read from
// the cache, and caches its prefixes for the requests after it.
func (c *prefixCache) lookup(prompt string, promptTokens int) int {
	if c == nil || promptTokens < c.min {
		return 0
	}
	// The cacheable lengths: min, min+block, ... up to the prompt, each
	// hashed by one pass over the prompt (four bytes a token).
	var keys []uint64
	var lens []int
	var h maphash.Hash
	h.SetSeed(c.seed)
	done := 0
	for l := c.min; l <= promptTokens; l += c.block {
		end := min(4*l, len(prompt))
		_, _ = h.WriteString(prompt[done:end])
		done = end
		keys = append(keys, h.Sum64())
		lens = append(lens, l)
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	hit := 0
	for i := len(keys) - 1; i >= 0; i-- {
		if e, ok := c.entries[keys[i]]; ok {
			if now.Sub(e.Value.(*cacheEntry).used) <= c.ttl {
				hit = lens[i]
				break
			}
		}
	}
	for _, k := range keys {
		if e, ok := c.entries[k]; ok {
			e.Value.(*cacheEntry).used = now
			c.lru.MoveToFront(e)
			continue
		}
		c.entries[k] = c.lru.PushFront(&cacheEntry{key: k, used: now})
		for c.lru.Len() > c.cap {
			last := c.lru.Back()
			delete(c.entries, last.Value.(*cacheEntry).key)
			c.lru.Remove(last)
		}
	}
	return hit
}
