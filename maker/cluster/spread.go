package cluster

import (
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Spreading a step over workers (and keeping quarantined ones off it).
//
// Each job names, in headers, the worker identities it should not go to:
// with DrawerConfig.Spread, Mdap-Avoid, the identities that already
// answered more of its step than the least used identity that answered the Drawer (soft: the engine's
// agent hands the job back to the queue for another worker while it has
// been delivered at most avoidDeliveries times, so a step never waits on
// an identity that is gone); and Mdap-Exclude, the identities this
// Drawer quarantined (hard: the agent never gives them the job). The
// agent reads the identity from the worker's credential, as it does for
// acknowledgements, so a worker cannot dodge either. Without roles there
// is no agent, and the worker itself honours the headers.

const (
	avoidHeader   = "Mdap-Avoid"
	excludeHeader = "Mdap-Exclude"
	// avoidDeliveries: a job is kept from the identities it avoids for
	// its first deliveries only.
	avoidDeliveries = 3
	// avoidDelay is how long a job handed back for another worker waits.
	avoidDelay = 20 * time.Millisecond
)

// book is a Drawer's record of who answered what.
type book struct {
	mu     sync.Mutex
	log    *slog.Logger
	names  map[string]string      // identity -> claimed name, of every identity that answered
	steps  map[int]map[string]int // step -> identity -> answers (spreading)
	latest int                    // the highest step in steps
	tally  map[string]*[2]int     // identity -> answers, lost in decided steps, over every watched run
	out    map[string]Quarantined // quarantined identities
	order  []string               // quarantined, in order
}

type cast struct {
	identity string
	key      uint64
}

func newBook(log *slog.Logger) *book {
	return &book{log: log, names: map[string]string{}, steps: map[int]map[string]int{},
		tally: map[string]*[2]int{}, out: map[string]Quarantined{}}
}

// ballot is one watched run's undecided votes, under its book's lock.
// A Drawer may watch several runs at once (a batch's tasks), whose steps
// share numbers: each run's votes are settled against its own winners.
type ballot struct {
	votes   map[int][]cast // undecided steps' voting answers
	settled int            // the highest decided step (-1: none): a sample of it or before is late
}

func newBallot() *ballot { return &ballot{votes: map[int][]cast{}, settled: -1} }

// answered records that identity (calling itself name) answered a sample
// of step (-1: none).
func (b *book) answered(step int, identity, name string) {
	if identity == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.names[identity] = name
	if step < 0 {
		return
	}
	m := b.steps[step]
	if m == nil {
		m = map[string]int{}
		b.steps[step] = m
	}
	m[identity]++
	if step > b.latest {
		b.latest = step
		for s := range b.steps {
			if s < step-4 {
				delete(b.steps, s)
			}
		}
	}
}

// headers sets a job's exclude header and, when spread, its avoid header
// for step (-1: none).
func (b *book) headers(h nats.Header, step int, spread bool) nats.Header {
	b.mu.Lock()
	defer b.mu.Unlock()
	var avoid []string
	if m := b.steps[step]; spread && step >= 0 && len(b.names) > len(b.out)+1 {
		least := math.MaxInt
		for id := range b.names {
			if _, q := b.out[id]; !q {
				least = min(least, m[id])
			}
		}
		for id, n := range m {
			if n > least {
				avoid = append(avoid, id)
			}
		}
	}
	if len(avoid) == 0 && len(b.order) == 0 {
		return h
	}
	if h == nil {
		h = nats.Header{}
	}
	if len(avoid) > 0 {
		slices.Sort(avoid)
		h.Set(avoidHeader, strings.Join(avoid, " "))
	}
	if len(b.order) > 0 {
		h.Set(excludeHeader, strings.Join(b.order, " "))
	}
	return h
}

// identityKey is the credential part of an agent identity (its inbox:
// the key, and on the embedded server a connection token after it).
func identityKey(id string) string {
	key, _, _ := strings.Cut(id, ".")
	return key
}

// keeps reports whether a job with headers h may go to the worker
// identity key on its delivery-th delivery.
func keeps(h nats.Header, key string, delivery uint64) bool {
	if slices.Contains(strings.Fields(h.Get(excludeHeader)), key) {
		return false
	}
	return delivery > avoidDeliveries || !slices.Contains(strings.Fields(h.Get(avoidHeader)), key)
}
