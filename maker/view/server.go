package view

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/httpbound"
	"github.com/mdap-go/mdap/internal/loopback"
)

//go:embed assets
var assets embed.FS

// Records finds a step's journal record: a File, or an in-process Live.
type Records interface {
	// Record returns step's record as JSON, or an error wrapping
	// ErrNoStep.
	Record(step int) ([]byte, error)
}

// Config is what a view serves.
type Config struct {
	// Run is the run shown. Required unless Batch is set.
	Run *Run
	// Batch, if set, is a batch shown: the page lists its tasks by
	// status, and ?task=NAME on the page and every address below shows
	// that task's run.
	Batch *Batch
	// Records finds a clicked step's record; nil answers every /step
	// with 404.
	Records Records
	// Token, if set, is required of every request: "Authorization:
	// Bearer TOKEN", or the cookie the page sets when it is first loaded
	// as /?token=TOKEN. Empty, the server answers only requests whose
	// Host is a loopback name or address (so a web page elsewhere cannot
	// reach it by rebinding its name to 127.0.0.1): serve without a token
	// on loopback only (see Serve).
	Token string
}

// MaxStreams is the most event streams a view serves at once; a stream
// past it is answered 503.
const MaxStreams = 8

// Bounds are the view's listener limits: a handful of people and their
// browsers, each with a page, a few fetches and one event stream.
var Bounds = httpbound.Limits{
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       10 * time.Second,
	// WriteTimeout bounds a response; an event stream extends it before
	// each write (streamWrite), so a stalled reader is cut within it.
	WriteTimeout:   30 * time.Second,
	IdleTimeout:    time.Minute,
	MaxConns:       32,
	MaxInFlight:    MaxStreams + 8,
	MaxHeaderBytes: httpbound.DefaultMaxHeaderBytes,
}

// streamWrite is how long one write of an event stream may take.
const streamWrite = 10 * time.Second

// streamEvery is the least time between two updates of an event stream,
// and streamPing the longest without a byte (a comment line keeps
// proxies from closing it).
const (
	streamEvery = 200 * time.Millisecond
	streamPing  = 15 * time.Second
)

// cookieName is the cookie that carries the token after the first load.
const cookieName = "mdap_view"

// ErrToken: a token that cannot guard a view (fewer than 16 or more than
// 4096 characters, or a space, control or non-ASCII character).
var ErrToken = errors.New("invalid view token")

// NewToken returns a token of 256 random bits, in hex.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand's contract)
	return hex.EncodeToString(b)
}

// CheckToken reports whether t can guard a view: 16 to 4096 printable ASCII
// characters a cookie may hold. Errors wrap ErrToken.
func CheckToken(t string) error {
	if len(t) < 16 || len(t) > 4096 {
		return fmt.Errorf("%w: %d characters; use 16 to 4096", ErrToken, len(t))
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c <= ' ' || c > '~' || c == ';' || c == ',' || c == '"' || c == '\\' {
			return fmt.Errorf("%w: character %d is not a printable ASCII character a cookie may hold", ErrToken, i+1)
		}
	}
	return nil
}

// Handler serves the view: the page (/, with its /app.js and /app.css),
// /state (the counters and the map's palette, JSON), /cells?from=N (the
// map's bytes from step N), /events (server-sent events: "cells" as
// steps are decided, "stats" as the counters change), /step/N (step N's
// journal record) and /map.png. With a Batch, /batch answers its tasks
// (JSON), /events without ?task= streams "batch" events, and ?task=NAME
// makes every other address answer for that task's run (404 for a task
// without one). It answers GET and HEAD only (405 otherwise): nothing it
// serves changes anything.
//
// Errors: ErrToken for a Token that cannot guard it.
func Handler(cfg Config) (http.Handler, error) {
	if cfg.Run == nil && cfg.Batch == nil {
		return nil, errors.New("view: Config.Run and Config.Batch are nil")
	}
	if cfg.Token != "" {
		if err := CheckToken(cfg.Token); err != nil {
			return nil, err
		}
	}
	v := &server{cfg: cfg, streams: make(chan struct{}, MaxStreams)}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", v.page)
	mux.HandleFunc("/app.js", v.asset("assets/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("/app.css", v.asset("assets/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("/state", v.state)
	mux.HandleFunc("/cells", v.cells)
	mux.HandleFunc("/events", v.events)
	mux.HandleFunc("/step/{n}", v.step)
	mux.HandleFunc("/map.png", v.png)
	mux.HandleFunc("/batch", v.batch)
	return v.guard(mux), nil
}

type server struct {
	cfg     Config
	streams chan struct{}
}

// guard applies the method, host and token rules and the headers every
// answer carries.
func (v *server) guard(h http.Handler) http.Handler {
	want := []byte(v.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			hd.Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed: the view is read-only (GET and HEAD)", http.StatusMethodNotAllowed)
			return
		}
		if len(want) == 0 {
			host, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				host = r.Host
			}
			if !loopback.Host(strings.Trim(host, "[]")) {
				http.Error(w, "403 forbidden: this view serves loopback names only (open it as http://127.0.0.1:PORT/)", http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), append([]byte("Bearer "), want...)) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(cookieName); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), want) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		if t := r.URL.Query().Get("token"); r.URL.Path == "/" && t != "" && subtle.ConstantTimeCompare([]byte(t), want) == 1 {
			// The token leaves the address bar (and the history) at once:
			// from here on the browser sends it as a cookie its scripts
			// cannot read, to this origin only.
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: v.cfg.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		hd.Set("WWW-Authenticate", `Bearer realm="mdap view"`)
		http.Error(w, "401 unauthorized: open the address maker view printed (with ?token=), or send Authorization: Bearer <token>", http.StatusUnauthorized)
	})
}

func (v *server) page(w http.ResponseWriter, r *http.Request) {
	v.asset("assets/index.html", "text/html; charset=utf-8")(w, r)
}

func (v *server) asset(name, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		b, err := assets.ReadFile(name)
		if err != nil {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(b)
	}
}

// stateJSON is what /state answers.
type stateJSON struct {
	// Stats is the run's (the task's with ?task=), absent for a batch.
	Stats   *Stats      `json:"stats,omitempty"`
	Batch   *BatchStats `json:"batch,omitempty"`
	Palette []string    `json:"palette"`
	// Detail says what a step's record holds, and what it does not.
	Detail string `json:"detail"`
}

// recordDetail is what the page says of a step's record.
const recordDetail = "A step's journal record holds its valid votes per answer key, its sample counts, red flags by reason, usage, each model's share, the winner and its tool call and observation. It does not hold each sample in order with its answer class: the journal does not record them yet; a run's own view (--ui) keeps the samples of its last steps' races and lists them."

// errNoTask: ?task= names no task with a run of its own.
var errNoTask = errors.New("no such task with a run in this batch")

// target is the run a request is for: ?task=NAME's in a batch, else the
// Config's Run (nil, nil, nil: the batch itself).
func (v *server) target(r *http.Request) (*Run, Records, error) {
	name := r.URL.Query().Get("task")
	if name == "" || v.cfg.Batch == nil {
		return v.cfg.Run, v.cfg.Records, nil
	}
	run, rec, ok := v.cfg.Batch.Task(name)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q", errNoTask, name)
	}
	return run, rec, nil
}

// targetRun is target for an address that needs a run: it answers 404
// itself when there is none.
func (v *server) targetRun(w http.ResponseWriter, r *http.Request) (*Run, Records, bool) {
	run, rec, err := v.target(r)
	if err == nil && run == nil {
		err = errors.New("this view shows a batch: name one of its tasks with ?task=NAME")
	}
	if err != nil {
		http.Error(w, "404 not found: "+err.Error(), http.StatusNotFound)
		return nil, nil, false
	}
	return run, rec, true
}

func (v *server) state(w http.ResponseWriter, r *http.Request) {
	run, _, err := v.target(r)
	if err != nil {
		http.Error(w, "404 not found: "+err.Error(), http.StatusNotFound)
		return
	}
	out := stateJSON{Detail: recordDetail}
	if run != nil {
		st := run.Stats()
		out.Stats, out.Palette = &st, paletteHex(st.K)
	} else {
		bs := v.cfg.Batch.Stats()
		out.Batch = &bs
	}
	writeJSON(w, out)
}

func (v *server) batch(w http.ResponseWriter, _ *http.Request) {
	if v.cfg.Batch == nil {
		http.Error(w, "404 not found: this view shows one run, not a batch", http.StatusNotFound)
		return
	}
	writeJSON(w, v.cfg.Batch.Stats())
}

func writeJSON(w http.ResponseWriter, x any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(x)
}

func (v *server) cells(w http.ResponseWriter, r *http.Request) {
	run, _, ok := v.targetRun(w, r)
	if !ok {
		return
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(run.Cells(from))
}

func (v *server) png(w http.ResponseWriter, r *http.Request) {
	run, _, ok := v.targetRun(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_ = run.WritePNG(w)
}

func (v *server) step(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 {
		http.Error(w, "400 bad request: /step/N takes a step number from 0", http.StatusBadRequest)
		return
	}
	_, records, ok := v.targetRun(w, r)
	if !ok {
		return
	}
	if records == nil {
		http.Error(w, "404 not found: this view keeps no step records", http.StatusNotFound)
		return
	}
	rec, err := records.Record(n)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, ErrNoStep) {
			code = http.StatusNotFound
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(rec)
}

// cellsChunk bounds one "cells" event: 64 Ki steps, 87 KiB of base64.
const cellsChunk = 64 << 10

// events streams the run: "cells" events ({"from":N,"cells":base64}),
// from the ?from=N the page already has, then "stats" events.
func (v *server) events(w http.ResponseWriter, r *http.Request) {
	select {
	case v.streams <- struct{}{}:
		defer func() { <-v.streams }()
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("503 service unavailable: this view serves at most %d event streams at once", MaxStreams), http.StatusServiceUnavailable)
		return
	}
	run, _, err := v.target(r)
	if err != nil {
		http.Error(w, "404 not found: "+err.Error(), http.StatusNotFound)
		return
	}
	sent, _ := strconv.Atoi(r.URL.Query().Get("from"))
	sent = max(sent, 0)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	ctx := r.Context()
	ping := time.NewTicker(streamPing)
	defer ping.Stop()
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWrite))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if run == nil {
		v.batchEvents(ctx, write, ping.C)
		return
	}
	// send writes the cells decided since the last send and the counters.
	send := func() bool {
		var buf []byte
		for cells := run.Cells(sent); len(cells) > 0; {
			n := min(len(cells), cellsChunk)
			ev, _ := json.Marshal(struct {
				From  int    `json:"from"`
				Cells string `json:"cells"`
			}{sent, base64.StdEncoding.EncodeToString(cells[:n])})
			buf = append(append(append(buf, "event: cells\ndata: "...), ev...), "\n\n"...)
			sent += n
			cells = cells[n:]
		}
		st, _ := json.Marshal(run.Stats())
		buf = append(append(append(buf, "event: stats\ndata: "...), st...), "\n\n"...)
		return write(buf)
	}
	for {
		changed := run.Changed()
		if !send() {
			return
		}
		select {
		case <-ctx.Done():
			// The server is closing (the run ended) or the client left:
			// the run's last state goes out, so the page ends on the
			// numbers its journal holds.
			send()
			return
		case <-time.After(streamEvery):
		}
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				send()
				return
			case <-changed:
				waiting = false
			case <-ping.C:
				if !write([]byte(": ping\n\n")) {
					return
				}
			}
		}
	}
}

// batchEvents streams a batch: a "batch" event when a task's status
// changes, or its runs' counters did within batchPoll.
func (v *server) batchEvents(ctx context.Context, write func([]byte) bool, ping <-chan time.Time) {
	var last []byte
	tick := time.NewTicker(batchPoll)
	defer tick.Stop()
	for {
		changed := v.cfg.Batch.Changed()
		st, _ := json.Marshal(v.cfg.Batch.Stats())
		if !bytes.Equal(st, last) {
			if !write(append(append([]byte("event: batch\ndata: "), st...), "\n\n"...)) {
				return
			}
			last = st
		}
		final := func() { // the batch's last state, as a run's stream sends it
			if st, _ := json.Marshal(v.cfg.Batch.Stats()); !bytes.Equal(st, last) {
				write(append(append([]byte("event: batch\ndata: "), st...), "\n\n"...))
			}
		}
		select {
		case <-ctx.Done():
			final()
			return
		case <-time.After(streamEvery):
		}
		select {
		case <-ctx.Done():
			final()
			return
		case <-changed:
		case <-tick.C:
		case <-ping:
			if !write([]byte(": ping\n\n")) {
				return
			}
		}
	}
}

// ErrAddr: an --addr that cannot be listened on as given.
var ErrAddr = errors.New("invalid view address")

// Loopback reports whether addr ([HOST]:PORT) listens on loopback only;
// an empty host means 127.0.0.1 here (Serve listens there).
//
// Errors: ErrAddr.
func Loopback(addr string) (bool, error) {
	host, _, err := splitAddr(addr)
	if err != nil {
		return false, err
	}
	return host == "" || loopback.Host(host), nil
}

func splitAddr(addr string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("%w: %q: %w; give HOST:PORT, such as 127.0.0.1:8080 (port 0 picks a free one)", ErrAddr, addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", "", fmt.Errorf("%w: %q: the port is not a number from 0 to 65535", ErrAddr, addr)
	}
	return host, port, nil
}

// Server is a running view.
type Server struct {
	*httpbound.Running
	cancel context.CancelFunc
}

// Listen listens on addr (an empty host is 127.0.0.1), for Serve.
//
// Errors: ErrAddr; the listener's (the port is taken, say).
func Listen(addr string) (net.Listener, error) {
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("view: %w", err)
	}
	return ln, nil
}

// Serve serves h on ln in a goroutine it owns until Close, within
// Bounds. A non-loopback listener must be served by a Handler with a
// Token: Serve does not check h, the caller does (maker view and --ui
// do).
func Serve(ln net.Listener, h http.Handler) *Server {
	ctx, cancel := context.WithCancel(context.Background()) // Close ends the event streams
	return &Server{Running: Bounds.Serve(ctx, ln, h), cancel: cancel}
}

// Close ends the event streams, lets other requests finish for up to a
// second, and waits for the server's goroutine.
func (s *Server) Close() error {
	s.cancel()
	return s.Running.Close()
}
