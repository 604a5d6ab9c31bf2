package simserver

import (
	"fmt"
	"strings"

	"github.com/mdap-go/mdap/internal/splitmix"
)

// faultKind is what a request gets instead of (or around) a reply.
type faultKind int

const (
	faultNone faultKind = iota
	faultRateLimit
	faultServerError
	faultHang
	faultTruncate
	faultGarbage
)

func (f faultKind) String() string {
	return [...]string{"none", "429", "500", "hang", "truncate", "garbage"}[f]
}

// Domains keep the server's draws apart from each other. The simulated
// model draws its own from other generators (package sim), so a fault
// never changes the reply a request would otherwise get.
const (
	domainFault    = 0x66617531 // which fault
	domainGarbage  = 0x67617231 // which garbage
	domainID       = 0x69643031 // the completion's id
	domainToolCall = 0x746f6f31 // a tool call's id
	domainRequest  = 0x72657131 // the request's id (X-Request-Id)
)

// mix hashes a seed and values into 64 bits.
func mix(seed uint64, vs ...uint64) uint64 {
	x := splitmix.Mix(seed)
	for _, v := range vs {
		x = splitmix.Mix(x ^ v)
	}
	return x
}

// unit maps 64 bits to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// drawFault draws the request's fault from (seed, step, index): the
// fractions partition [0, 1) in the order 429, 500, hang, truncate,
// garbage, and the rest is no fault.
func (s *Server) drawFault(id requestID) faultKind {
	f := s.cfg.Faults
	if f.Total() == 0 {
		return faultNone
	}
	u := unit(mix(s.cfg.Sim.Seed, domainFault, uint64(id.step), uint64(id.index)))
	for _, k := range []struct {
		p    float64
		kind faultKind
	}{{f.RateLimit, faultRateLimit}, {f.ServerError, faultServerError}, {f.Hang, faultHang}, {f.Truncate, faultTruncate}, {f.Garbage, faultGarbage}} {
		if u < k.p {
			return k.kind
		}
		u -= k.p
	}
	return faultNone
}

// garbage is a 200 body that is not JSON, one of three kinds a broken
// proxy or server sends: an HTML error page, JSON cut and spliced with
// noise, or binary noise.
func garbage(seed uint64, id requestID) string {
	x := mix(seed, domainGarbage, uint64(id.step), uint64(id.index))
	noise := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteByte(byte(splitmix.Mix(x + uint64(i))))
		}
		return b.String()
	}
	switch x % 3 {
	case 0:
		return "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>\n"
	case 1:
		return fmt.Sprintf(`{"id":"chatcmpl-%016x","choices":[{"index":0,"message":{"role":"assistant","content":"%x}]}}}`, x, noise(8))
	default:
		return "\x00\x1f\x8b" + noise(61)
	}
}
