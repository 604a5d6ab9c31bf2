package journal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
)

// This file makes a journal tamper-evident. Every line, the header and
// the checkpoints included, ends with a "chain" field: the SHA-256 of the
// previous line's chain value and of this line's bytes before the field
// (for the header, of 32 zero bytes and its bytes). With a key (the
// KeyEnv environment variable's, or the state folder's) the hash is an
// HMAC-SHA256 under that key, so a party without the key cannot rewrite a
// journal consistently; without a key the chain finds every accidental or
// careless edit (a flipped byte, a changed number, a line dropped, added
// or moved) but not a forger who recomputes it. Dropping whole lines at
// the end is not an edit the chain can see: those steps are decided again
// on resume, as after a crash.
//
// Cost: one SHA-256 (two more compression blocks with a key) of each line
// when it is written and when a resume reads it; no extra I/O.

// KeyEnv names the environment variable whose value, when set and
// not empty, keys the journal's hash chain (HMAC-SHA256): New reads it. A journal written with a key is
// only resumed with the same key; one written without is refused while a
// key is set, so a forger cannot drop the key by rewriting the journal as
// unkeyed.
const KeyEnv = "MDAP_JOURNAL_KEY"

// MinKey is the shortest key accepted, in bytes.
const MinKey = 16

// ErrKey: the journal's key does not fit: too short, missing for a
// journal written with one, or set for a journal written without.
var ErrKey = errors.New("journal key does not fit")

// chainField precedes a line's chain value; the value is 64 hex digits
// and the line ends with `"}`.
const chainField = `,"chain":"`

// chainSuffixLen is the length of the chain field, its value and the
// line's closing `"}`.
const chainSuffixLen = len(chainField) + 2*sha256.Size + 2

// chain computes a journal's chained hashes.
type chain struct {
	h     hash.Hash // SHA-256, or HMAC-SHA256 with a key
	prev  [sha256.Size]byte
	out   []byte // Sum's buffer, kept so a sum allocates nothing
	keyed bool
}

func newChain(key []byte) *chain {
	if len(key) > 0 {
		return &chain{h: hmac.New(sha256.New, key), keyed: true}
	}
	return &chain{h: sha256.New()}
}

// sum returns the chain value of a line whose bytes before the chain
// field are body, after the line before it.
func (c *chain) sum(body []byte) [sha256.Size]byte {
	c.h.Reset()
	c.h.Write(c.prev[:])
	c.h.Write(body)
	c.out = c.h.Sum(c.out[:0])
	return [sha256.Size]byte(c.out)
}

// seal turns a JSON object's bytes (ending in '}') into a chained line
// and advances the chain. It reuses line's spare capacity.
func (c *chain) seal(line []byte) []byte {
	body := line[:len(line)-1]
	s := c.sum(body)
	c.prev = s
	out := append(body, chainField...)
	out = hex.AppendEncode(out, s[:])
	return append(out, '"', '}')
}

// verify checks a stored line against the chain and advances it; it
// returns the line's JSON without its chain field (sharing line's bytes
// up to the field), or an error saying what does not fit.
func (c *chain) verify(line []byte) ([]byte, error) {
	n := len(line) - chainSuffixLen
	if n < 1 || string(line[n:n+len(chainField)]) != chainField || string(line[len(line)-2:]) != `"}` {
		return nil, errors.New("has no hash-chain field at its end")
	}
	var got [sha256.Size]byte
	if _, err := hex.Decode(got[:], line[n+len(chainField):len(line)-2]); err != nil {
		return nil, errors.New("has a hash-chain field that is not 64 hex digits")
	}
	want := c.sum(line[:n])
	if !hmac.Equal(got[:], want[:]) {
		return nil, errors.New("does not match the journal's hash chain: this line was changed, or a line before it was dropped, added or moved")
	}
	c.prev = want
	return line[:n], nil
}

// journalKey returns the key in KeyEnv, or nil.
func journalKey() ([]byte, error) {
	k := os.Getenv(KeyEnv)
	if k == "" {
		return nil, nil
	}
	if len(k) < MinKey {
		return nil, fmt.Errorf("%w: %s holds %d bytes; use at least %d random bytes (for example: openssl rand -hex 32), or unset it for an unkeyed chain",
			ErrKey, KeyEnv, len(k), MinKey)
	}
	return []byte(k), nil
}

// unseal returns a chained line's JSON without its chain field, in a new
// slice: for decoding a record checked by verify when the journal was
// opened.
func unseal(line []byte) []byte {
	n := len(line) - chainSuffixLen
	if n < 1 {
		return line
	}
	out := make([]byte, n+1)
	copy(out, line[:n])
	out[n] = '}'
	return out
}
