package sim

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/splitmix"
)

// Domains keep the seeds of identified samples and counted calls apart.
const (
	domainSample  = 1
	domainCounter = 2
	domainStep    = 3 // a step's difficulty, shared by its samples
)

// Slots: each random decision of a call has its own generator, so that one
// decision never shifts another's draws. Changing P only turns wrong
// replies into correct ones and back; changing the latency changes no
// answer. The values are part of every seeded run: never renumber.
const (
	slotPartition     = 1 // provider error / red flag / valid
	slotCorrect       = 2 // correct or wrong
	slotConcentration = 3 // variant 0 forced?
	slotVariant       = 4 // which wrong variant
	slotFlagKind      = 5 // overlong / cut off / malformed
	slotFlagAux       = 6 // overlong length, malformed variant
	slotText          = 7 // filler text
	slotLatency       = 8 // latency
	slotDifficulty    = 9 // the step's p (in the step's stream)
	slotHardAgree     = 10
	slotSurface       = 11 // a right reply's surface form
)

// stream is the random source of one call: a 64-bit seed from which each
// slot's PCG generator is derived. It holds no mutable state, so a call's
// draws do not depend on their order.
type stream struct{ seed uint64 }

func newStream(seed uint64, domain, a, b, promptHash uint64) stream {
	x := splitmix.Mix(seed)
	for _, v := range [...]uint64{domain, a, b, promptHash} {
		x = splitmix.Mix(x ^ v)
	}
	return stream{seed: x}
}

// hashString hashes s eight bytes at a time (little-endian words, so the
// same on every platform), then mixes the result with splitmix64. Not
// cryptographic; it only has to tell prompts apart.
func hashString(s string) uint64 {
	h := uint64(len(s)) * 0x9e3779b97f4a7c15
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = bits.RotateLeft64((h^w)*0xbf58476d1ce4e5b9, 31)
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		h = bits.RotateLeft64((h^uint64(s[i]))*0x94d049bb133111eb, 31)
	}
	return splitmix.Mix(h)
}

func (s stream) pcg(slot uint64) *rand.PCG {
	hi := splitmix.Mix(s.seed ^ (slot * 0xd1b54a32d192ed03))
	return rand.NewPCG(hi, splitmix.Mix(hi))
}

// rng returns slot's generator.
func (s stream) rng(slot uint64) *rand.Rand { return rand.New(s.pcg(slot)) }

// unit returns slot's uniform draw in [0, 1).
func (s stream) unit(slot uint64) float64 {
	return float64(s.pcg(slot).Uint64()>>11) / (1 << 53)
}

// intn returns slot's uniform draw in [0, n), n > 0.
func (s stream) intn(slot uint64, n int) int {
	return min(int(s.unit(slot)*float64(n)), n-1)
}

// draw returns the call's latency.
func (l Latency) draw(st stream) time.Duration {
	switch l.kind {
	case latencyFixed:
		return l.fixed
	case latencyUniform:
		span := float64(l.max - l.min)
		return l.min + time.Duration(st.unit(slotLatency)*span)
	case latencyLognormal:
		d := float64(l.median) * math.Exp(l.sigma*st.rng(slotLatency).NormFloat64())
		if l.max > 0 && d > float64(l.max) {
			return l.max
		}
		if d >= math.MaxInt64 {
			return math.MaxInt64
		}
		return time.Duration(d)
	}
	return 0
}

// ramble is the vocabulary of filler text.
var ramble = []string{
	"Let me think about this step carefully.",
	"First, I will restate the rules to make sure I follow them.",
	"Wait, I should double-check the current state before deciding.",
	"Considering the previous step, there are a few options here.",
	"On reflection, the procedure says something slightly different.",
	"Let me reconsider the alternatives one more time.",
	"Hmm, this requires some care, so I will go through it again.",
	"Actually, let me verify that against the rules once more.",
}

// filler returns n bytes of ASCII rambling drawn from r, ending with a
// newline when n > 0.
func filler(r *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n + 80)
	for b.Len() < n-1 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ramble[r.IntN(len(ramble))])
	}
	return b.String()[:n-1] + "\n"
}

// stepP draws a step's probability of a right reply from a Beta
// distribution with mean mean and variance spread × mean(1-mean), from the
// step's stream: Beta(a, b) with a + b = 1/spread - 1, as X/(X+Y) for X,
// Y gamma draws, computed in logs so that a tiny shape (a mean near 1)
// neither underflows nor loses the rare hard step.
func stepP(st stream, mean, spread float64) float64 {
	if spread <= 0 || mean >= 1 || mean <= 0 {
		return mean
	}
	nu := 1/spread - 1
	r := st.rng(slotDifficulty)
	lx := logGamma(r, mean*nu)
	ly := logGamma(r, (1-mean)*nu)
	return 1 / (1 + math.Exp(ly-lx))
}

// logGamma returns the log of a Gamma(shape, 1) draw (Marsaglia and Tsang
// 2000; a shape below 1 boosted by U^(1/shape)).
func logGamma(r *rand.Rand, shape float64) float64 {
	boost := 0.0
	if shape < 1 {
		boost = math.Log(1-r.Float64()) / shape
		shape++
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return math.Log(d*v) + boost
		}
	}
}
