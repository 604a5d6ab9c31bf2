package mcpserver

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
)

// sessionTable keeps the HTTP sessions within their caps without letting
// one client shut the others out. A client is a remote IP address: the
// bearer token is one secret shared by every client, so it names none,
// and the address is what a client cannot multiply cheaply. (Every
// client on the server's own machine shares a loopback address, so there
// they share the per-client cap; they are told apart by use, below.)
//
// A new session (a POST without Mcp-Session-Id) is admitted thus:
//   - a client at its cap (perClient) gives up one of its own idle
//     sessions;
//   - at the server's cap (max), the client holding the most sessions
//     gives one up, when it holds more than the newcomer or is the
//     newcomer;
//   - the session given up is an idle one (no POST in flight), one that
//     never made a call first, else the one used least recently; it is
//     closed (its client's next request gets 404 and, as the MCP spec
//     asks, starts a new session);
//   - when no such session is idle, the new one is refused (503); so is
//     one that would displace a session its client called on while the
//     client has other sessions still being opened.
//
// So a burst of initialize calls cycles through its own sessions and
// never locks others out. A session with a POST in flight is never closed;
// an idle one only for its own client's new session, or at the server's
// cap for a client holding fewer sessions than its own.
type sessionTable struct {
	max, perClient int
	sessions       func() map[string]io.Closer // the server's live sessions by ID

	mu      sync.Mutex
	entries map[string]*sessionEntry // by session ID
	pending map[string]int           // by client: admitted, not yet opened
	// closing are the sessions given up and not yet closed: a POST on
	// one is refused (use), never let in to be cut off by the close.
	closing map[string]bool
	clock   uint64 // orders uses
}

type sessionEntry struct {
	client string
	added  uint64 // clock when it was opened
	called bool   // it made a call (a request with an id) after initialize
	last   uint64 // clock at its last request
	busy   int    // its POSTs in flight
}

// errSessionRefused is the reason for a 503 to a new session.
type errSessionRefused string

func (e errSessionRefused) Error() string { return string(e) }

func newSessionTable(max, perClient int, sessions func() map[string]io.Closer) *sessionTable {
	return &sessionTable{max: max, perClient: perClient, sessions: sessions, entries: map[string]*sessionEntry{}, pending: map[string]int{}, closing: map[string]bool{}}
}

// clientOf is the client a request comes from: its remote IP address.
func clientOf(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// admit makes room for a new session of client, closing the session it
// displaces, and returns the function to call with the new session's ID
// (empty when none was opened) once the request is served. Errors: the
// refusal, whose text is the 503's.
func (t *sessionTable) admit(client string) (opened func(id string), err error) {
	t.mu.Lock()
	read := t.clock
	t.mu.Unlock()
	live := t.sessions()
	t.mu.Lock()
	for id, e := range t.entries { // ended by DELETE, timeout or a failed initialize
		// One opened since live was read is live though not in it.
		if live[id] == nil && e.added <= read {
			delete(t.entries, id)
		}
	}
	counts := map[string]int{}
	total := 0
	for _, e := range t.entries {
		counts[e.client]++
		total++
	}
	for c, n := range t.pending {
		counts[c] += n
		total += n
	}
	victim := ""
	switch {
	case t.perClient > 0 && counts[client] >= t.perClient:
		if victim = t.idlest(client); victim == "" {
			t.mu.Unlock()
			return nil, errSessionRefused(fmt.Sprintf("503 service unavailable: this server holds at most %d sessions per client (per remote address), and none of yours is idle; end one (DELETE) or retry once a call ends", t.perClient))
		}
	case t.max > 0 && total >= t.max:
		clients := make([]string, 0, len(counts))
		for c := range counts {
			clients = append(clients, c)
		}
		slices.SortFunc(clients, func(a, b string) int { return counts[b] - counts[a] })
		for _, c := range clients { // the biggest holder first; itself, or one holding more
			if c != client && counts[c] <= counts[client] {
				continue
			}
			if victim = t.idlest(c); victim != "" {
				break
			}
		}
		if victim == "" {
			t.mu.Unlock()
			return nil, errSessionRefused(fmt.Sprintf("503 service unavailable: this server holds at most %d sessions, none of them idle and held by a client with more than yours; retry shortly", t.max))
		}
	}
	if victim != "" {
		delete(t.entries, victim)
		t.closing[victim] = true
	}
	t.pending[client]++
	t.clock++
	admitted := t.clock // its age counts from its request, not from its response
	t.mu.Unlock()
	if victim != "" {
		if ss := live[victim]; ss != nil {
			_ = ss.Close()
		}
		t.mu.Lock()
		delete(t.closing, victim)
		t.mu.Unlock()
	}
	return func(id string) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.pending[client]--; t.pending[client] == 0 {
			delete(t.pending, client)
		}
		if id != "" {
			t.clock++
			t.entries[id] = &sessionEntry{client: client, last: admitted, added: t.clock}
		}
	}, nil
}

// handler puts the caps in front of next: a new session (a POST without
// Mcp-Session-Id) is admitted or refused 503, a request on a session
// being closed is refused 404, any other request on a session is its
// use. A new session is recorded when next writes its response's header,
// before its client can send the session's next request.
func (t *sessionTable) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionHeader)
		if r.Method == http.MethodPost && id == "" {
			opened, err := t.admit(clientOf(r))
			if err != nil {
				w.Header().Set("Retry-After", "1")
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			ow := &openingWriter{ResponseWriter: w, opened: opened}
			defer ow.open()
			next.ServeHTTP(ow, r)
			return
		}
		if id != "" {
			done, ok := t.use(id, r.Method == http.MethodPost)
			if !ok {
				http.Error(w, "404 not found: this session was closed to make room for another; start a new session", http.StatusNotFound)
				return
			}
			defer done()
		}
		next.ServeHTTP(w, r)
	})
}

// openingWriter calls opened with the session ID its response carries
// (empty for none) once, when the response's header is written or, if it
// never is, when the request ends.
type openingWriter struct {
	http.ResponseWriter
	opened func(id string)
	once   sync.Once
}

func (w *openingWriter) open() {
	w.once.Do(func() { w.opened(w.Header().Get(sessionHeader)) })
}

func (w *openingWriter) WriteHeader(code int) {
	w.open()
	w.ResponseWriter.WriteHeader(code)
}

func (w *openingWriter) Write(b []byte) (int, error) {
	w.open()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's Flush.
func (w *openingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// idlest is client's session to give up: idle, never called first, then
// least recently used; "" when all are busy. While client has sessions
// being opened (a burst of initialize calls), a session it called on is
// not given up for them: the burst's own, once open, go first. t.mu is
// held.
func (t *sessionTable) idlest(client string) string {
	best := ""
	var b *sessionEntry
	for id, e := range t.entries {
		if e.client != client || e.busy > 0 || (e.called && t.pending[client] > 0) {
			continue
		}
		if b == nil || (!e.called && b.called) || (e.called == b.called && e.last < b.last) {
			best, b = id, e
		}
	}
	return best
}

// use records a request on session id, busy until done is called when
// post is set (a POST's call may run long; a GET's event stream is not
// use). ok is false for a POST on a session given up and still being
// closed: it must be refused, as it will be once the session is gone,
// not let in to be cut off by the close.
func (t *sessionTable) use(id string, post bool) (done func(), ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if post && t.closing[id] {
		return nil, false
	}
	e := t.entries[id]
	if e == nil {
		return func() {}, true
	}
	t.clock++
	e.last = t.clock
	if !post {
		return func() {}, true
	}
	// A POST on an open session is a call (the initialize that opened it
	// came without the session's ID), so the session is one its client
	// uses: it gives way only after those that never made one.
	e.called = true
	e.busy++
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		e.busy--
		t.clock++
		e.last = t.clock
	}, true
}

// called records that session id made a call.
func (t *sessionTable) called(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.entries[id]; e != nil {
		e.called = true
	}
}
