package cluster

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mdap-go/mdap/maker"
)

// Quarantine (see Drawer.Watch): once a step is decided, each answer of
// it that voted for another key than the winner's lost. A worker identity is quarantined
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
	// Reason is why, when not its answers' losses: it stored something
	// other than a job's reply under the job's reply id, or acknowledged
	// a job with no reply stored, which no honest worker does (its
	// answer counts and PValue are then zero).
	Reason string `json:"reason,omitempty"`
}

// misbehaved quarantines identity (named name) at once for why: a
// message under a job's reply id that is not the job's reply.
func (b *book) misbehaved(identity, name, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, q := b.out[identity]; q || identity == "" {
		return
	}
	if name == "" {
		name = b.names[identity]
	}
	b.out[identity] = Quarantined{Identity: identity, Name: name, Step: -1, Reason: why}
	b.order = append(b.order, identity)
	b.log.Warn("worker quarantined: "+why+"; it gets no more jobs of this run", "identity", identity, "name", name)
}

func (b *book) quarantined(identity string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.out[identity]
	return ok
}

// sample records a voting answer of an undecided step of bl's run.
func (b *book) sample(bl *ballot, e maker.SampleEvent) {
	if e.Worker == "" || e.Key == 0 {
		return
	}
	b.mu.Lock()
	if e.Step > bl.settled {
		bl.votes[e.Step] = append(bl.votes[e.Step], cast{e.Worker, e.Key})
	}
	b.mu.Unlock()
}

// decided settles step's answers in bl's run against its winning key
// (hex) and quarantines the identities whose answers, over every run the
// book watches, lose far more often than their peers'.
func (b *book) decided(bl *ballot, step int, keyHex string) {
	key, err := strconv.ParseUint(keyHex, 16, 64)
	b.mu.Lock()
	defer b.mu.Unlock()
	vs := bl.votes[step]
	delete(bl.votes, step)
	bl.settled = max(bl.settled, step)
	for s := range bl.votes {
		if s < step-4 {
			delete(bl.votes, s) // a step that failed, or a late sample
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

// Watch lets the Drawer judge the workers of s's run: s's OnSample and
// Progress (kept, and called first) also feed the Drawer, which, once
// each step is decided, quarantines a worker identity whose answers lose
// far more often than its peers' (see QuarantineAlpha): it is logged
// (a warning on DrawerConfig.Logger), listed by Quarantined, its jobs
// from then on exclude it, and a reply it still sends counts as a failed
// sample. Call it before s.Solve, once per Solver and run. One Drawer
// may watch several solvers running at once (a batch's tasks, see
// BatchConfig.Drawer): each run's answers are settled against its own
// winners, and the counts and the quarantine span them all, so a worker
// quarantined in one run gets no job of any. Cost: a few map operations
// per sample and per step, under one lock.
func (d *Drawer) Watch(s *maker.Solver) {
	s.OnSample, s.Progress = d.Hooks(s.OnSample, s.Progress)
}

// Hooks returns what Watch sets: onSample and progress (either may be
// nil) each called first, then feeding the Drawer. Give them to a Solver
// as its OnSample and Progress when it is built, to watch its runs
// without changing it afterwards; each call of Hooks watches one run.
// Cost: none until called.
func (d *Drawer) Hooks(onSample func(maker.SampleEvent), progress func(maker.Event)) (func(maker.SampleEvent), func(maker.Event)) {
	bl := newBallot()
	sample := func(e maker.SampleEvent) {
		if onSample != nil {
			onSample(e)
		}
		d.book.sample(bl, e)
	}
	decided := func(e maker.Event) {
		if progress != nil {
			progress(e)
		}
		if !e.Replayed && e.Record != nil {
			d.book.decided(bl, e.Step, e.Record.Key)
		}
	}
	return sample, decided
}

// Quarantined returns the worker identities the Drawer quarantined, in
// order.
func (d *Drawer) Quarantined() []Quarantined { return d.book.list() }

// errQuarantined is the failure of a sample a quarantined worker answered.
func errQuarantined(id string) error {
	return fmt.Errorf("%w: worker %s is quarantined: its answer does not vote", ErrRemote, id)
}
