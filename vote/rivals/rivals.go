// Package rivals holds the scaling laws of a vote when a step's wrong
// votes spread over several wrong answers (the simulated model's error
// model), beside the closed forms of package vote, which assume one
// rival. Calibration and the benchmarks use them; the step loop does not.
//
// One rival is the worst case for the wrong-winner rate, not for cost:
// with wrong votes spread over several answers the leader must be k ahead
// of each, and at small k a race can take more votes than
// laws.ExpectedSamples says (at k = 2 with eight spread rivals, about 20%
// more at p = 0.6). [ExpectedSamples] and [PStep] take the spread as a
// [Spread] and compute the laws by an exact dynamic program with a
// documented cap on work ([MaxWork], [ErrTooCostly]).
package rivals

import (
	"errors"
	"fmt"

	"github.com/mdap-go/mdap/vote/laws"
)

// ErrTooCostly: a law with rivals ([ExpectedSamples], [PStep])
// would take more than [MaxWork] state updates, or would set aside more
// probability mass than it promises.
var ErrTooCostly = errors.New("too costly to compute exactly")

// MaxWork caps the work of one law with rivals: the number of (state,
// next vote) updates its dynamic program may make. It bounds the time
// (linear in the updates, see BenchmarkLawsWithRivals) and the memory (the
// states alive at once). Beyond it the law fails with ErrTooCostly.
const MaxWork = 1 << 24

// MaxN is the largest Spread.N the laws accept.
const MaxN = 1 << 10

const (
	// lawTolerance: with one rival, the law stops when the probability
	// that the race is still undecided is below it.
	lawTolerance = 1e-13
	// With several rivals: the law stops when the undecided probability
	// is below lawStopMany (the last votes before 1e-13 would cost most of
	// the work, the states being then the most numerous, and move the
	// result by about as little as the geometric extrapolation of the tail
	// errs); it drops the states whose probability is below lawPrune, and
	// fails with ErrTooCostly when the mass so set aside exceeds
	// lawMaxLoss.
	lawStopMany = 1e-9
	lawPrune    = 1e-14
	lawMaxLoss  = 1e-8
	// maxLawCount is the largest vote count a state byte holds.
	maxLawCount = 255
)

// Spread is how a step's wrong valid votes spread over wrong answers: the
// error model of the simulated model (maker/sim): a wrong vote goes to
// rival 0 with probability Concentration, otherwise to one of N rivals
// (0 .. N-1) drawn uniformly. So with p the probability of a right vote,
// rival 0 gets a vote with probability (1-p)(Concentration +
// (1-Concentration)/N) and each other rival with (1-p)(1-Concentration)/N.
//
// The zero value, N = 1 and Concentration = 1 all mean one rival: every
// wrong vote for the same wrong answer, the case of the closed forms
// ([laws.PStep], [laws.ExpectedSamples]).
type Spread struct {
	// N is the number of distinct wrong answers; 0 and 1 both mean one.
	// At most MaxN.
	N int
	// Concentration is the probability that a wrong vote goes to rival 0
	// whatever N says. In [0, 1].
	Concentration float64
}

// law is what the dynamic program computes for one (p, k, Spread).
type law struct {
	right   float64 // P(the right answer wins)
	samples float64 // E[valid votes until a k-lead]
	updates int     // the state updates made
}

// PStep is the probability that a race with margin k ends on the right
// answer when right votes come with probability p and wrong votes spread
// over rivals. With one rival it is laws.PStep(p, k). Spreading the wrong votes
// over several rivals makes the right answer likelier to win
// (TestLawsWithRivals checks a grid of p > 1/2), which is why laws.PStep is
// the worst case for the wrong-winner rate.
//
// The laws with rivals are computed by a dynamic program over the vote
// counts of the right answer and of each rival, one valid vote at a time
// (rivals other than rival 0 are interchangeable, so a state holds their
// counts as a sorted list). With one rival a state is the lead, 2k-1 of
// them, and the program runs until the probability that the race is still
// undecided is below 1e-13: exact. With several, it runs until that
// probability is below 1e-9, drops the states of probability below 1e-14
// and tracks the mass so set aside (over 1e-8 in all, ErrTooCostly); both
// are counted as ending at the geometric rate of the last votes. So the
// result is exact but for at most 1e-8 of probability, and in practice
// within 1e-9 (relative) of the program run to 1e-13 with nothing dropped
// (TestLawsWithRivalsPrecision).
//
// Errors: laws.ErrOutOfRange for p outside [0, 1], k < 1, N outside [0,
// MaxN] or a Concentration outside [0, 1]; ErrTooCostly when the
// program would make more than MaxWork state updates, set aside more
// than 1e-8, or count more than 255 votes for one answer. Cost, in state
// updates (BenchmarkLawsWithRivals times them and reports them): with one
// rival, 2k-1 per vote over a few tens of times E[N] votes; with several,
// the states multiply with N and k: at k = 2 to 5 with 8 rivals from tens
// of thousands to millions of updates, at k = 10 with 8 rivals beyond
// MaxWork.
func PStep(p float64, k int, rivals Spread) (float64, error) {
	l, err := raceLaw(p, k, rivals)
	return min(l.right, 1), err // summing many tiny masses can round past 1
}

// ExpectedSamples is the expected number of valid votes a race with
// margin k takes when right votes come with probability p and wrong votes
// spread over rivals. With one rival it is laws.ExpectedSamples(p, k). Unlike
// laws.PStep, one rival is not the worst case for cost: with wrong votes spread
// over several answers the leader must be k ahead of each of them, and at
// small k and moderate p a race runs longer than laws.ExpectedSamples says: at
// k = 2 with eight uniformly spread rivals, 2.8% longer at p = 0.75, 19.5%
// at p = 0.6, 31.5% at p = 0.55 (TestLawsWithRivals pins these); at larger
// k or p it can be shorter. Divide by the valid-format rate for samples
// drawn.
//
// Computed as PStep is: the same program, errors and cost.
func ExpectedSamples(p float64, k int, rivals Spread) (float64, error) {
	l, err := raceLaw(p, k, rivals)
	return l.samples, err
}

// raceLaw checks its arguments and runs the program that fits them.
func raceLaw(p float64, k int, rivals Spread) (law, error) {
	c := rivals.Concentration
	switch {
	case !unit(p):
		return law{}, fmt.Errorf("rivals: p %v, want 0 <= p <= 1: %w", p, laws.ErrOutOfRange)
	case k < 1:
		return law{}, fmt.Errorf("rivals: k %d, want at least 1: %w", k, laws.ErrOutOfRange)
	case rivals.N < 0 || rivals.N > MaxN:
		return law{}, fmt.Errorf("rivals: %d rivals, want 0 to %d: %w", rivals.N, MaxN, laws.ErrOutOfRange)
	case !unit(c):
		return law{}, fmt.Errorf("rivals: rival concentration %v, want 0 <= c <= 1: %w", c, laws.ErrOutOfRange)
	}
	n := max(1, rivals.N)
	q := (1 - p) * (1 - c) / float64(n) // each of rivals 1..n-1
	if n == 1 || q == 0 {
		return oneRivalLaw(p, k)
	}
	pr := programme{k: k, p: p, q0: (1 - p) * (c + (1-c)/float64(n)), q: q, others: n - 1,
		stop: lawStopMany, prune: lawPrune, maxLoss: lawMaxLoss, budget: MaxWork}
	l, err := pr.run()
	if err != nil {
		return law{}, fmt.Errorf("rivals: p %v, k %d, %+v: %w", p, k, rivals, err)
	}
	return l, nil
}

// oneRivalLaw is the program for one rival: a state is the right answer's
// lead, from -(k-1) to k-1, so it is exact and cheap.
func oneRivalLaw(p float64, k int) (law, error) {
	var l law
	cur := make([]float64, 2*k-1) // cur[k-1+d]: P(lead d, undecided)
	next := make([]float64, len(cur))
	cur[k-1] = 1
	prev, work := 1.0, 0
	for votes := 1; ; votes++ {
		if work += len(cur); work > MaxWork {
			return law{}, fmt.Errorf("rivals: p %v, k %d, one rival: more than %d state updates: %w", p, k, MaxWork, ErrTooCostly)
		}
		clear(next)
		mass := 0.0
		for i, w := range cur {
			if w == 0 {
				continue
			}
			if i+1 < len(cur) {
				next[i+1] += w * p
			} else {
				l.right += w * p
				l.samples += w * p * float64(votes)
			}
			if i > 0 {
				next[i-1] += w * (1 - p)
			} else {
				l.samples += w * (1 - p) * float64(votes)
			}
		}
		for _, w := range next {
			mass += w
		}
		cur, next = next, cur
		if mass < lawTolerance {
			l.addTail(mass, votes, l.right/(1-mass), mass/prev)
			l.updates = work
			return l, nil
		}
		prev = mass
	}
}

// addTail counts an undecided mass after the given number of votes as
// ending geometrically at the survival rate seen on the last vote, and as
// won by the right answer with probability right.
func (l *law) addTail(mass float64, votes int, right, rate float64) {
	if mass <= 0 {
		return
	}
	rate = min(rate, 1-1e-9)
	l.samples += mass * (float64(votes) + 1/(1-rate))
	l.right += mass * right
}

// programme is the dynamic program for several rivals.
//
// A state is a byte string: the right answer's vote count, rival 0's, then
// the non-zero counts of rivals 1..n-1 in decreasing order. A vote moves
// every undecided state's mass to its successors; a successor in which the
// answer just voted for leads every other by k is decided and leaves.
type programme struct {
	k      int
	p, q0  float64 // a right vote; a vote for rival 0
	q      float64 // a vote for one given rival among 1..n-1
	others int     // n-1

	stop, prune, maxLoss float64 // see lawStopMany, lawPrune, lawMaxLoss
	budget               int     // the most state updates
}

// run runs the program with the key type that fits: a 16-byte array (no
// allocation, fast to hash) when a state always fits in one, else a string.
func (pr *programme) run() (law, error) {
	if 2+pr.others <= 16 {
		return runProgramme(pr, func(b []byte) (key [16]byte) {
			copy(key[:], b)
			return key
		}, func(key [16]byte, b []byte) []byte {
			n := 2
			for n < len(key) && key[n] != 0 {
				n++
			}
			return append(b[:0], key[:n]...)
		})
	}
	return runProgramme(pr, func(b []byte) string { return string(b) },
		func(key string, b []byte) []byte { return append(b[:0], key...) })
}

// runProgramme is the program over states keyed by K: enc makes the key of
// a state, dec writes a key's state into a buffer and returns it.
func runProgramme[K comparable](pr *programme, enc func([]byte) K, dec func(K, []byte) []byte) (law, error) {
	var (
		l          law
		wrong      float64
		lost       float64
		work       int
		prev       = 1.0
		cur        = map[K]float64{enc([]byte{0, 0}): 1}
		next       = map[K]float64{}
		s, buf     []byte
		k          = pr.k
		errTooLong = fmt.Errorf("an answer with more than %d votes: %w", maxLawCount, ErrTooCostly)
	)
	for votes := 1; ; votes++ {
		mass := 0.0
		for key, w := range cur {
			s = dec(key, s)
			a, b0 := int(s[0]), int(s[1])
			rest := s[2:] // decreasing
			if a == maxLawCount || b0 == maxLawCount || (len(rest) > 0 && rest[0] == maxLawCount) {
				return law{}, errTooLong
			}
			top := 0 // the best count among rivals 1..n-1
			if len(rest) > 0 {
				top = int(rest[0])
			}
			// A right vote.
			if m := w * pr.p; m > 0 {
				work++
				if a+1-max(b0, top) >= k {
					l.right += m
					l.samples += m * float64(votes)
				} else {
					buf = append(buf[:0], s...)
					buf[0]++
					next[enc(buf)] += m
					mass += m
				}
			}
			// A vote for rival 0.
			if m := w * pr.q0; m > 0 {
				work++
				if b0+1-max(a, top) >= k {
					wrong += m
					l.samples += m * float64(votes)
				} else {
					buf = append(buf[:0], s...)
					buf[1]++
					next[enc(buf)] += m
					mass += m
				}
			}
			// A vote for one of rivals 1..n-1: for each distinct count v
			// among them (0 included), the first rival holding v gets it;
			// the list stays decreasing.
			for i := 0; i <= len(rest); i++ {
				var v, mult int
				if i < len(rest) {
					if i > 0 && rest[i] == rest[i-1] {
						continue
					}
					v, mult = int(rest[i]), 1
					for j := i + 1; j < len(rest) && rest[j] == rest[i]; j++ {
						mult++
					}
				} else if mult = pr.others - len(rest); mult == 0 {
					continue
				}
				work++
				m := w * pr.q * float64(mult)
				best := max(a, b0) // everyone but the rival voted for
				switch {
				case i > 0:
					best = max(best, top)
				case mult > 1:
					best = max(best, v)
				case len(rest) > 1:
					best = max(best, int(rest[1]))
				}
				if v+1-best >= k {
					wrong += m
					l.samples += m * float64(votes)
					continue
				}
				buf = append(buf[:0], s...)
				if i < len(rest) {
					buf[2+i]++
				} else {
					buf = append(buf, 1)
				}
				next[enc(buf)] += m
				mass += m
			}
			if work > pr.budget {
				return law{}, fmt.Errorf("more than %d state updates: %w", pr.budget, ErrTooCostly)
			}
		}
		cur, next = next, cur
		clear(next)
		dropped := 0.0
		for key, w := range cur {
			if w < pr.prune {
				dropped += w
				delete(cur, key)
			}
		}
		right := laws.PStep(pr.p, k) // before any race ends: one rival, the worst case
		if decided := l.right + wrong; decided > 0 {
			right = l.right / decided
		}
		if dropped > 0 {
			// Set aside: counted as ending like the undecided tail.
			if lost += dropped; lost > pr.maxLoss {
				return law{}, fmt.Errorf("more than %g of probability in states below %g: %w", pr.maxLoss, pr.prune, ErrTooCostly)
			}
			l.addTail(dropped, votes, right, mass/prev)
			mass -= dropped
		}
		if mass < pr.stop {
			l.addTail(mass, votes, right, mass/prev)
			l.updates = work
			return l, nil
		}
		prev = mass
	}
}

// unit reports whether p is a probability.
func unit(p float64) bool { return p >= 0 && p <= 1 }
