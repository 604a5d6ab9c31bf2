package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/nats-io/nats.go"
)

// Spreading a step over workers, and quarantining a worker whose answers
// lose.
//
// Each job names, in headers, the worker identities it should not go to:
// with DrawerConfig.Spread, Mdap-Avoid, the identities that already answered more of its step than
// the least used identity that answered the Drawer (soft: the engine's
// agent hands the job back to the queue for another worker while it has
// been delivered at most avoidDeliveries times, so a step never waits on
// an identity that is gone); and Mdap-Exclude, the identities this
// Drawer quarantined (hard: the agent never gives them the job). The
// agent reads the identity from the worker's credential, as it does for
// acknowledgements, so a worker cannot dodge either. Without roles there
// is no agent, and the worker itself honours the headers.
//
// Quarantine: once a step is decided, each answer of it that voted for
// another key than the winner's lost. A worker identity is quarantined
// when Fisher's exact test, one-sided, rejects at QuarantineAlpha that
// its answers lose no more often than the other identities' answers (its
// losses among all the run's answers, against the hypergeometric tail).
// An honest worker's answers are the other workers' in distribution (a
// sample's value depends only on its seed, step and index, and the
// engine gives samples to workers whatever their values), so each test
// falsely quarantines an honest worker with probability at most
// QuarantineAlpha; it runs once per decided step per worker that
// answered the step, so a run of s steps with w workers quarantines an
// honest one with probability at most s·w·QuarantineAlpha (1e-5 for a
// million steps of ten workers).

// QuarantineAlpha is the false-positive probability of one quarantine
// test (see Drawer.Watch).
const QuarantineAlpha = 1e-12

const (
	avoidHeader   = "Mdap-Avoid"
	excludeHeader = "Mdap-Exclude"
	// avoidDeliveries: a job is kept from the identities it avoids for
	// its first deliveries only.
	avoidDeliveries = 3
	// avoidDelay is how long a job handed back for another worker waits.
	avoidDelay = 20 * time.Millisecond
)

// Quarantined is a worker identity a Drawer stopped giving jobs to.
type Quarantined struct {
	// Identity is the worker's credential (its public key); Name the name
	// it gave itself, for people.
	Identity string `json:"identity"`
	Name     string `json:"name"`
	// Answers and Lost are its voting answers in decided steps and how
	// many of them lost; PeerAnswers and PeerLost the other identities'.
	Answers     int `json:"answers"`
	Lost        int `json:"lost"`
	PeerAnswers int `json:"peer_answers"`
	PeerLost    int `json:"peer_lost"`
	// PValue is the test's p-value when it was quarantined (below
	// QuarantineAlpha).
	PValue float64 `json:"p_value"`
	// Step is the step after whose decision it was quarantined.
	Step int `json:"step"`
}

// book is a Drawer's record of who answered what.
type book struct {
	mu      sync.Mutex
	log     *slog.Logger
	names   map[string]string      // identity -> claimed name, of every identity that answered
	steps   map[int]map[string]int // step -> identity -> answers (spreading)
	latest  int                    // the highest step in steps
	votes   map[int][]cast         // undecided steps' voting answers
	settled int                    // the highest decided step: a sample of it or before is late
	tally   map[string]*[2]int     // identity -> answers, lost in decided steps
	out     map[string]Quarantined // quarantined identities
	order   []string               // quarantined, in order
}

type cast struct {
	identity string
	key      uint64
}

func newBook(log *slog.Logger) *book {
	return &book{log: log, names: map[string]string{}, steps: map[int]map[string]int{},
		votes: map[int][]cast{}, tally: map[string]*[2]int{}, out: map[string]Quarantined{}}
}

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

func (b *book) quarantined(identity string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.out[identity]
	return ok
}

// sample records a voting answer of an undecided step.
func (b *book) sample(e maker.SampleEvent) {
	if e.Worker == "" || e.Key == 0 {
		return
	}
	b.mu.Lock()
	if e.Step > b.settled || len(b.tally) == 0 {
		b.votes[e.Step] = append(b.votes[e.Step], cast{e.Worker, e.Key})
	}
	b.mu.Unlock()
}

// decided settles step's answers against its winning key (hex) and
// quarantines the identities whose answers lose far more often than
// their peers'.
func (b *book) decided(step int, keyHex string) {
	key, err := strconv.ParseUint(keyHex, 16, 64)
	b.mu.Lock()
	defer b.mu.Unlock()
	vs := b.votes[step]
	delete(b.votes, step)
	b.settled = max(b.settled, step)
	for s := range b.votes {
		if s < step-4 {
			delete(b.votes, s) // a step that failed, or a late sample
		}
	}
	if err != nil || len(vs) == 0 {
		return
	}
	seen := map[string]bool{}
	for _, v := range vs {
		t := b.tally[v.identity]
		if t == nil {
			t = new([2]int)
			b.tally[v.identity] = t
		}
		t[0]++
		if v.key != key {
			t[1]++
		}
		seen[v.identity] = true
	}
	total, lost := 0, 0
	for _, t := range b.tally {
		total, lost = total+t[0], lost+t[1]
	}
	for id := range seen {
		if _, q := b.out[id]; q {
			continue
		}
		t := b.tally[id]
		p := fisherTail(total, lost, t[0], t[1])
		if p >= QuarantineAlpha {
			continue
		}
		q := Quarantined{Identity: id, Name: b.names[id], Answers: t[0], Lost: t[1],
			PeerAnswers: total - t[0], PeerLost: lost - t[1], PValue: p, Step: step}
		b.out[id] = q
		b.order = append(b.order, id)
		b.log.Warn("worker quarantined: its answers lose far more often than its peers'; it gets no more jobs of this run",
			"identity", id, "name", q.Name, "answers", q.Answers, "lost", q.Lost,
			"peer_answers", q.PeerAnswers, "peer_lost", q.PeerLost, "p_value", p, "step", step)
	}
}

func (b *book) list() []Quarantined {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Quarantined, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, b.out[id])
	}
	return out
}

// fisherTail is P(X >= l) for X hypergeometric: l or more of the lost
// answers among a worker's n answers, drawn from total answers of which
// lost lost.
func fisherTail(total, lost, n, l int) float64 {
	if l <= 0 || float64(l) <= float64(n)*float64(lost)/float64(total) {
		// At or below its expected losses: the tail holds about half
		// the mass or more, far above any alpha; 1 spares the sum.
		return 1
	}
	logC := func(a, b int) float64 {
		x, _ := math.Lgamma(float64(a + 1))
		y, _ := math.Lgamma(float64(b + 1))
		z, _ := math.Lgamma(float64(a - b + 1))
		return x - y - z
	}
	den := logC(total, n)
	sum := 0.0
	for x := l; x <= min(n, lost); x++ {
		if n-x > total-lost {
			continue
		}
		term := math.Exp(logC(lost, x) + logC(total-lost, n-x) - den)
		sum += term
		if term < sum*1e-17 {
			break // past the mean the terms only shrink
		}
	}
	return min(sum, 1)
}

// Watch lets the Drawer judge the workers of s's runs: s's OnSample and
// Progress (kept, and called first) also feed the Drawer, which, once
// each step is decided, quarantines a worker identity whose answers lose
// far more often than its peers' (see QuarantineAlpha): it is logged
// (a warning on DrawerConfig.Logger), listed by Quarantined, its jobs
// from then on exclude it, and a reply it still sends counts as a failed
// sample. Call it before s.Solve.
func (d *Drawer) Watch(s *maker.Solver) {
	onSample, progress := s.OnSample, s.Progress
	s.OnSample = func(e maker.SampleEvent) {
		if onSample != nil {
			onSample(e)
		}
		d.book.sample(e)
	}
	s.Progress = func(e maker.Event) {
		if progress != nil {
			progress(e)
		}
		if !e.Replayed && e.Record != nil {
			d.book.decided(e.Step, e.Record.Key)
		}
	}
}

// Quarantined returns the worker identities the Drawer quarantined, in
// order.
func (d *Drawer) Quarantined() []Quarantined { return d.book.list() }

// errQuarantined is the failure of a sample a quarantined worker answered.
func errQuarantined(id string) error {
	return fmt.Errorf("%w: worker %s is quarantined: its answer does not vote", ErrRemote, id)
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

// pullers records, on the engine's agent, when each worker identity last
// pulled each route's jobs.
type pullers struct {
	mu   sync.Mutex
	last map[string]map[string]time.Time // route token -> identity key -> last pull
}

// pullerIdle: an identity that has not pulled for this long no longer
// counts as serving the route (a worker's pull waits at most a second
// before it pulls again).
const pullerIdle = 30 * time.Second

func (p *pullers) saw(token, key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]map[string]time.Time{}
	}
	m := p.last[token]
	if m == nil {
		m = map[string]time.Time{}
		p.last[token] = m
	}
	m[key] = time.Now()
}

// serving counts the identities that pulled token's jobs within
// pullerIdle, forgetting the others.
func (p *pullers) serving(token string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for key, at := range p.last[token] {
		if time.Since(at) > pullerIdle {
			delete(p.last[token], key)
			continue
		}
		n++
	}
	return n
}

// serveWorkers answers a coordinator's mdap.engine.workers request.
func (a *Agent) serveWorkers(m *nats.Msg) {
	var req agentRequest
	var resp agentResponse
	if err := json.Unmarshal(m.Data, &req); err != nil || req.Route == "" || len(req.Route) > 4096 {
		resp.Error = "want a route of 1 to 4096 bytes"
	} else {
		resp.Workers = a.pulls.serving(RouteToken(req.Route))
	}
	data, _ := json.Marshal(resp)
	_ = m.Respond(data)
}

// ServingWorkers asks the engine's agent, on nc (a coordinator's
// connection), how many distinct worker identities serve route: those
// whose pulls of the route's jobs the agent saw within the last 30
// seconds. Each identity is a credential, so machines sharing one count
// once. It is what maker --min-workers 0 (the default) settles on.
// Errors wrap ErrEngine, except the one of a server that runs no agent
// (one without roles), which cannot count identities.
func ServingWorkers(ctx context.Context, nc *nats.Conn, route string) (int, error) {
	data, _ := json.Marshal(agentRequest{Route: route})
	ctx, cancel := context.WithTimeout(ctx, agentTimeout)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, agentSubject+"workers", data)
	if errors.Is(err, nats.ErrNoResponders) {
		return 0, errNoAgent
	}
	if err != nil {
		return 0, fmt.Errorf("%w: ask the engine for the workers of %s: %w", ErrEngine, route, err)
	}
	var resp agentResponse
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return 0, fmt.Errorf("%w: the engine's answer: %w", ErrEngine, err)
	}
	if resp.Error != "" {
		return 0, fmt.Errorf("%w: the engine refused: %s", ErrEngine, resp.Error)
	}
	return resp.Workers, nil
}
