package maker

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"os"
	"path/filepath"
	"regexp"

	"github.com/mdap-go/mdap/internal/buildinfo"
	"github.com/mdap-go/mdap/maker/journal"
)

// What the step loop's tests read of a journal's lines, as package
// journal writes them (its own tests pin the format).

// journalHeader is a journal's header with its settings decoded.
type journalHeader struct {
	journal.Header
	Settings Settings `json:"settings"`
}

var (
	runIDPattern     = regexp.MustCompile(`^[0-9a-f]{32}$`)
	checkpointPrefix = []byte(`{"checkpoint":`)
)

// chainSuffixLen is the length of a line's chain field, its 64 hex
// digits and the closing `"}`.
const chainSuffixLen = len(`,"chain":"`) + 64 + 2

// unseal returns a chained line's JSON without its chain field.
func unseal(line []byte) []byte {
	n := len(line) - chainSuffixLen
	if n < 1 {
		return line
	}
	return append(line[:n:n], '}')
}

// chainHead is a journal's head as the state folder keeps it.
type chainHead struct {
	Lines   int    `json:"lines"`
	Chain   string `json:"chain"`
	Journal string `json:"journal"`
}

// saveHead records run's head in the state folder.
func saveHead(state, run string, h chainHead) error {
	if err := os.MkdirAll(filepath.Join(state, "journal-heads"), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(state, "journal-heads", run+".json"), append(b, '\n'), 0o600)
}

// The state folder's files (package journal's state.go).
const (
	keyFile  = "journal.key"
	headsDir = "journal-heads"
)

func headPath(state, run string) string {
	return filepath.Join(state, headsDir, run+".json")
}

// testChain is a journal's hash chain, as a forger who knows the key
// (nil: the unkeyed SHA-256 chain) recomputes it.
type testChain struct {
	h    hash.Hash
	prev []byte
}

func newChain(key []byte) *testChain {
	if len(key) > 0 {
		return &testChain{h: hmac.New(sha256.New, key), prev: make([]byte, sha256.Size)}
	}
	return &testChain{h: sha256.New(), prev: make([]byte, sha256.Size)}
}

// seal turns a JSON object's bytes into a chained line.
func (c *testChain) seal(line []byte) []byte {
	body := line[:len(line)-1]
	c.h.Reset()
	c.h.Write(c.prev)
	c.h.Write(body)
	c.prev = c.h.Sum(nil)
	out := append(body[:len(body):len(body)], `,"chain":"`...)
	out = hex.AppendEncode(out, c.prev)
	return append(out, '"', '}')
}

var (
	headerPrefix = []byte(`{"mdap_journal":`)
	chainField   = `,"chain":"`
)

// mdapVersion is the mdap module's version as a journal header records it.
func mdapVersion() string { return buildinfo.Module("github.com/mdap-go/mdap") }
