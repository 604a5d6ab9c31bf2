package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/journal"
)

func testJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	// A loaded machine's server may greet after Connect's 2 s, as the
	// cluster_test helpers' connect says.
	nc, err := Connect(srv.ClientURL(), t.Name(), nats.Timeout(30*time.Second))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}

// sharedStore is run's journal on the shared JournalsStream, loaded.
func sharedStore(t *testing.T, js jetstream.JetStream, run string) *journalStore {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, ensureRunStreams(ctx, js, 1))
	st, err := js.Stream(ctx, JournalsStream)
	require.NoError(t, err)
	s := &journalStore{js: js, stream: st, run: run, subject: journalSubject + run}
	require.NoError(t, s.load(ctx))
	return s
}

// Two writers that both think they hold a run never interleave lines:
// every append expects the journal subject's last sequence, so the second
// one's append is refused, saying what the subject holds, and nothing of
// it is stored; another run's lines between them on the shared stream
// change nothing.
func TestJournalAppendsAreFenced(t *testing.T) {
	t.Parallel()
	js := testJS(t)
	a, b, other := sharedStore(t, js, "f"), sharedStore(t, js, "f"), sharedStore(t, js, "g")
	require.NoError(t, a.Append([]byte(`{"a":1}`)))
	require.NoError(t, a.Flush())
	require.NoError(t, other.Append([]byte(`{"g":1}`)))
	require.NoError(t, other.Flush())
	require.NoError(t, a.Append([]byte(`{"a":2}`)))
	require.NoError(t, a.Flush())
	require.NoError(t, b.Append([]byte(`{"b":1}`)))
	err := b.Flush()
	require.ErrorIs(t, err, ErrLeaseLost)
	assert.Contains(t, err.Error(), `written by another coordinator`)
	assert.Regexp(t, `its last line is line "2" at sequence \d+, not this line 1 after sequence 0\)`, err.Error(), "what the subject holds, and what this writer expected")
	require.ErrorIs(t, b.Append([]byte(`{"b":2}`)), ErrLeaseLost, "a fenced store stays refused")

	c := sharedStore(t, js, "f")
	var lines []string
	require.NoError(t, c.Lines(0, func(_ int, l []byte) error { lines = append(lines, string(l)); return nil }))
	assert.Equal(t, []string{`{"a":1}`, `{"a":2}`}, lines)
	lines = nil
	require.NoError(t, c.Lines(1, func(n int, l []byte) error {
		assert.Equal(t, 1, n)
		lines = append(lines, string(l))
		return nil
	}))
	assert.Equal(t, []string{`{"a":2}`}, lines)

	// A journal with lines is never reset by its coordinator (a shared
	// stream is purged by the admin only); one with none starts as it is.
	require.ErrorIs(t, a.Reset(), journal.ErrCorrupt)
	e := sharedStore(t, js, "e")
	require.NoError(t, e.Reset())
	require.NoError(t, e.Append([]byte(`{"e":1}`)))
	require.NoError(t, e.Flush())
}

// A holder whose lease was taken (it was cut off longer than the TTL)
// learns it at its next refresh and refuses to append.
//
// The new holder is a lease of its own, refreshed as a live
// coordinator's is: a bare key written once expires a TTL later, and
// under load the steps below took longer than that (CI-like load: the
// last Get found no key at all).
func TestJournalLeaseLostRefusesAppends(t *testing.T) {
	t.Parallel()
	js := testJS(t)
	ctx := context.Background()
	l, err := acquireLease(ctx, js, LeaseBucket, "x", JournalConfig{LeaseTTL: 2 * time.Second})
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, LeaseBucket)
	require.NoError(t, err)
	require.NoError(t, kv.Purge(ctx, "x")) // as if it expired
	other, err := acquireLease(ctx, js, LeaseBucket, "x", JournalConfig{LeaseTTL: 2 * time.Second, Owner: "other"})
	require.NoError(t, err)
	defer other.release()
	require.Eventually(t, func() bool { return l.check() != nil }, 5*time.Second, 20*time.Millisecond)
	require.ErrorIs(t, l.check(), ErrLeaseLost)
	require.NoError(t, ensureRunStreams(ctx, js, 1))
	st, err := js.Stream(ctx, JournalsStream)
	require.NoError(t, err)
	s := &journalStore{js: js, stream: st, run: "x", subject: journalSubject + "x", lease: l}
	require.NoError(t, s.load(ctx))
	require.ErrorIs(t, s.Append([]byte(`{}`)), ErrLeaseLost)
	require.ErrorIs(t, s.Close(), ErrLeaseLost)
	l.release()
	require.NoError(t, other.check(), "the new holder's lease, refreshed all along")
	e, err := kv.Get(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, "other", string(e.Value()), "the loser's release leaves the new holder's lease alone")
}

// A lease whose refreshes go unanswered for a whole TTL (the server is
// down) is lost, and the message says it was an outage, not another
// coordinator.
func TestJournalLeaseLostToAnOutageSaysSo(t *testing.T) {
	t.Parallel()
	srv, _, js := serveInternal(t)
	l, err := acquireLease(context.Background(), js, LeaseBucket, "o", JournalConfig{LeaseTTL: time.Second})
	require.NoError(t, err)
	defer l.stopRefresh()
	srv.Shutdown()
	require.Eventually(t, func() bool { return l.check() != nil }, 10*time.Second, 20*time.Millisecond)
	err = l.check()
	require.ErrorIs(t, err, ErrLeaseLost)
	assert.NotErrorIs(t, err, ErrLeaseTaken)
	assert.Contains(t, err.Error(), "did not answer")
	assert.NotContains(t, err.Error(), "another coordinator")
}

// A journal longer than one batched read (lineBatch lines), its lines
// among another run's on the shared stream, reads whole and in order,
// from its first line or from any line on.
func TestJournalLinesSpanBatches(t *testing.T) {
	t.Parallel()
	js := testJS(t)
	long, other := sharedStore(t, js, "long"), sharedStore(t, js, "other")
	const n = 2*lineBatch + 300
	for i := range n {
		require.NoError(t, long.Append([]byte(fmt.Sprintf(`{"line":%d}`, i))))
		if i%7 == 0 {
			require.NoError(t, long.Flush())
			require.NoError(t, other.Append([]byte(fmt.Sprintf(`{"other":%d}`, i))))
			require.NoError(t, other.Flush())
		}
	}
	require.NoError(t, long.Flush())

	r := sharedStore(t, js, "long")
	for _, from := range []int{0, lineBatch - 1, lineBatch, n - 1} {
		next := from
		require.NoError(t, r.Lines(from, func(i int, l []byte) error {
			require.Equal(t, next, i, "lines in order, none skipped")
			require.Equal(t, fmt.Sprintf(`{"line":%d}`, i), string(l))
			next++
			return nil
		}))
		assert.Equal(t, n, next, "every line from %d on", from)
	}
}
