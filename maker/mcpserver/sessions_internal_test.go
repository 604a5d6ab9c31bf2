package mcpserver

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSessions stands for the SDK's live sessions: opening adds one,
// closing (an eviction) removes it.
type fakeSessions struct {
	live   map[string]io.Closer
	closed []string
	n      int
}

type fakeSession struct {
	f  *fakeSessions
	id string
}

func (s fakeSession) Close() error {
	delete(s.f.live, s.id)
	s.f.closed = append(s.f.closed, s.id)
	return nil
}

func (f *fakeSessions) snapshot() map[string]io.Closer {
	m := make(map[string]io.Closer, len(f.live))
	for k, v := range f.live {
		m[k] = v
	}
	return m
}

// open admits and opens one session of client and returns its ID, or the
// refusal.
func (f *fakeSessions) open(t *testing.T, tab *sessionTable, client string) (string, error) {
	t.Helper()
	opened, err := tab.admit(client)
	if err != nil {
		return "", err
	}
	f.n++
	id := fmt.Sprintf("%s#%d", client, f.n)
	f.live[id] = fakeSession{f, id}
	opened(id)
	return id, nil
}

func (f *fakeSessions) count(client string) int {
	n := 0
	for id := range f.live {
		if len(id) > len(client) && id[:len(client)+1] == client+"#" {
			n++
		}
	}
	return n
}

// TestSessionTableFairness: the admission policy of HTTPOptions.MaxSessions
// and MaxSessionsPerClient. A client flooding new sessions cycles through
// its own (never-called ones first, so its caller on the same address
// keeps a session in use); at the server's cap the biggest holder gives
// way, never a smaller client's; only when nothing is idle is a new
// session refused.
func TestSessionTableFairness(t *testing.T) {
	t.Parallel()
	f := &fakeSessions{live: map[string]io.Closer{}}
	tab := newSessionTable(12, 4, f.snapshot)

	// A careful client on the flooder's address, using its session.
	mine, err := f.open(t, tab, "10.0.0.1")
	require.NoError(t, err)
	tab.called(mine)
	// Another client holds two sessions, one of them in a call.
	other1, err := f.open(t, tab, "10.0.0.2")
	require.NoError(t, err)
	other2, err := f.open(t, tab, "10.0.0.2")
	require.NoError(t, err)
	done, ok := tab.use(other2, true)
	require.True(t, ok)

	// 1,000 initialize calls from 10.0.0.1, never used: every one is
	// admitted, the address never holds more than 4, and the session in
	// use survives.
	for i := range 1000 {
		_, err := f.open(t, tab, "10.0.0.1")
		require.NoError(t, err, "flood %d", i)
		require.LessOrEqual(t, f.count("10.0.0.1"), 4)
	}
	assert.Contains(t, f.live, mine, "the called session outlived the never-called ones")
	assert.Contains(t, f.live, other1, "another client's sessions are not touched")
	assert.Contains(t, f.live, other2)

	// At the server's cap (12), a newcomer takes the place of an idle
	// session of the biggest holder.
	for _, c := range []string{"10.0.0.3", "10.0.0.3", "10.0.0.3", "10.0.0.4", "10.0.0.4", "10.0.0.4"} {
		_, err := f.open(t, tab, c)
		require.NoError(t, err)
	}
	require.Len(t, f.live, 4+2+6)
	f.closed = nil
	_, err = f.open(t, tab, "10.0.0.5")
	require.NoError(t, err)
	require.Len(t, f.closed, 1)
	assert.Regexp(t, `^10\.0\.0\.1#`, f.closed[0], "the biggest holder (4 sessions) gave way")
	assert.NotEqual(t, mine, f.closed[0], "its never-called ones first")
	assert.Len(t, f.live, 12)

	// A client holding no more than the newcomer never gives way to it,
	// nor does a busy session: then a newcomer is refused.
	g := &fakeSessions{live: map[string]io.Closer{}}
	small := newSessionTable(2, 4, g.snapshot)
	a, err := g.open(t, small, "a")
	require.NoError(t, err)
	_, err = g.open(t, small, "b")
	require.NoError(t, err)
	busyA, _ := small.use(a, true)
	_, err = g.open(t, small, "b")
	require.NoError(t, err, "b, at the cap, gives up its own idle session")
	c, err := g.open(t, small, "c")
	require.NoError(t, err, "c takes b's idle session: b holds more than c")
	assert.Equal(t, 0, g.count("b"))
	busyC, _ := small.use(c, true)
	_, err = g.open(t, small, "d")
	var refused errSessionRefused
	require.ErrorAs(t, err, &refused, "every session busy: refused")
	assert.Contains(t, err.Error(), "at most 2 sessions")
	busyC()
	busyA()

	// A client holding no more than the newcomer keeps its session: the
	// newcomer's own gives way.
	k := &fakeSessions{live: map[string]io.Closer{}}
	three := newSessionTable(3, 4, k.snapshot)
	a1, _ := k.open(t, three, "a")
	c1, _ := k.open(t, three, "c")
	d1, _ := k.open(t, three, "d")
	_, err = k.open(t, three, "d")
	require.NoError(t, err)
	assert.Equal(t, []string{d1}, k.closed, "d's own idle session gave way, not a's or c's")
	assert.Contains(t, k.live, a1)
	assert.Contains(t, k.live, c1)

	// At a client's cap with every session of its own busy: refused, naming
	// the per-client cap; once a call ends, admitted.
	h := &fakeSessions{live: map[string]io.Closer{}}
	per := newSessionTable(100, 2, h.snapshot)
	var dones []func()
	for range 2 {
		id, err := h.open(t, per, "x")
		require.NoError(t, err)
		done, _ := per.use(id, true)
		dones = append(dones, done)
	}
	_, err = h.open(t, per, "x")
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, err.Error(), "at most 2 sessions per client")
	_, err = h.open(t, per, "y")
	require.NoError(t, err, "another client is not refused")
	dones[0]()
	_, err = h.open(t, per, "x")
	require.NoError(t, err)
	done()
}

// blockingSession is a session whose Close waits for release, as a close
// of a real one may, and says when it began.
type blockingSession struct {
	closing, release chan struct{}
}

func (s blockingSession) Close() error {
	close(s.closing)
	<-s.release
	return nil
}

// TestPostOnASessionBeingClosedIsRefused: a session given up for a new
// one is closed after the table's lock is let go; a POST on it in that
// gap was let in (its entry was already gone, so use made nothing of it)
// and then cut off by the close. It is refused instead (ok false: a 404),
// and once the close is done the ID is unknown, as a closed session's.
func TestPostOnASessionBeingClosedIsRefused(t *testing.T) {
	t.Parallel()
	victim := blockingSession{closing: make(chan struct{}), release: make(chan struct{})}
	live := map[string]io.Closer{"old": victim}
	var mu sync.Mutex
	tab := newSessionTable(10, 1, func() map[string]io.Closer {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(live)
	})
	opened, err := tab.admit("10.0.0.1")
	require.NoError(t, err)
	opened("old")

	admitted := make(chan error, 1)
	go func() { // the client's second session gives up its first
		opened, err := tab.admit("10.0.0.1")
		if err == nil {
			opened("new")
		}
		admitted <- err
	}()
	<-victim.closing
	done, ok := tab.use("old", true)
	assert.False(t, ok, "a POST on a session being closed is refused")
	assert.Nil(t, done)
	close(victim.release)
	require.NoError(t, <-admitted)
	mu.Lock()
	delete(live, "old")
	live["new"] = fakeSession{}
	mu.Unlock()
	_, ok = tab.use("old", true)
	assert.True(t, ok, "once closed, the ID is one the table does not know (the SDK answers 404)")
}

// TestASessionUsedByAPostOutlastsAFlood: the server never marked a
// session as called (only the tests did, through called), so a session
// its client used lost to the flood's fresher never-used ones by least
// recent use, and a client on the flooder's address lost its session
// (TestHTTPSessionFloodLocksNobodyOut failed in CI now and then). A POST
// on a session marks it called, so the flood's sessions give way first.
func TestASessionUsedByAPostOutlastsAFlood(t *testing.T) {
	t.Parallel()
	f := &fakeSessions{live: map[string]io.Closer{}}
	tab := newSessionTable(256, 4, f.snapshot)
	mine, err := f.open(t, tab, "127.0.0.1")
	require.NoError(t, err)
	done, ok := tab.use(mine, true) // a tools/call
	require.True(t, ok)
	done()
	for range 100 { // one at a time: nothing pending when each is admitted
		_, err := f.open(t, tab, "127.0.0.1")
		require.NoError(t, err)
	}
	assert.Contains(t, f.live, mine, "the used session outlasts 100 never-used ones at the cap of 4")
	assert.NotContains(t, f.closed, mine)
}

// TestASessionIsKnownBeforeItsClientSeesIt: the table learned of a new
// session only once the SDK's handler had returned, after the client had
// its response; a loaded server let the client's next POSTs (its
// notifications/initialized, its first call) in before that, so they
// were not recorded as use, the session stayed "never called", and a
// flood from the same address closed it (TestHTTPSessionFloodLocksNobodyOut
// failed in CI under load). The session is recorded when its response's
// header is written, so any request its client sends after is its use.
func TestASessionIsKnownBeforeItsClientSeesIt(t *testing.T) {
	t.Parallel()
	tab := newSessionTable(256, 4, func() map[string]io.Closer { return map[string]io.Closer{"s1": fakeSession{}} })
	written, release := make(chan struct{}), make(chan struct{})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(sessionHeader) != "" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set(sessionHeader, "s1")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "{}")
		close(written)
		<-release // the handler's goroutine, descheduled after the response
	})
	h := tab.handler(next)
	init := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
	init.RemoteAddr = "127.0.0.1:1"
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeHTTP(httptest.NewRecorder(), init)
	}()
	<-written
	call := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
	call.RemoteAddr = "127.0.0.1:1"
	call.Header.Set(sessionHeader, "s1")
	h.ServeHTTP(httptest.NewRecorder(), call)
	tab.mu.Lock()
	e := tab.entries["s1"]
	tab.mu.Unlock()
	require.NotNil(t, e, "the session is in the table once its response is written")
	assert.True(t, e.called, "a POST after the response counts as use")
	close(release)
	<-served
	tab.mu.Lock()
	assert.Zero(t, tab.pending["127.0.0.1"], "opened once: nothing left pending")
	tab.mu.Unlock()
}

// TestASessionOpenedDuringAnAdmitIsKept: admit reads the live sessions
// before it takes the table's lock, and forgot every entry missing from
// that read; a session opened in between was forgotten though live, so
// it was counted against no cap and never given up. Only entries older
// than the read are forgotten.
func TestASessionOpenedDuringAnAdmitIsKept(t *testing.T) {
	t.Parallel()
	f := &fakeSessions{live: map[string]io.Closer{}}
	var tab *sessionTable
	var raced string
	tab = newSessionTable(256, 4, func() map[string]io.Closer {
		snap := f.snapshot()
		if raced == "" { // another request's session opens after the read
			raced = "pending"
			id, err := f.open(t, tab, "10.0.0.2")
			require.NoError(t, err)
			raced = id
		}
		return snap
	})
	_, err := f.open(t, tab, "10.0.0.1")
	require.NoError(t, err)
	tab.mu.Lock()
	defer tab.mu.Unlock()
	assert.Contains(t, tab.entries, raced, "a live session opened during an admit stays counted")
}
