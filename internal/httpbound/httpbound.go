// Package httpbound bounds an HTTP server: read, write and idle timeouts,
// 16 KiB of request headers, a cap on open connections and a cap on
// requests in flight, each refused
// past its cap with a clear 503 instead of queueing without end. It is
// what serve-sim and the MCP HTTP server listen with, so that thousands of
// slow or idle clients cost a bounded number of file descriptors,
// goroutines and bytes.
package httpbound

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound a server. A zero field takes its default (see Defaults);
// a negative one means no bound.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout
	// the whole request, body included (a slow body is cut).
	ReadHeaderTimeout, ReadTimeout time.Duration
	// WriteTimeout bounds writing a response, from the end of the
	// request's headers.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request.
	IdleTimeout time.Duration
	// MaxConns is the most connections open at once; a connection past it
	// is answered 503 and closed at once.
	MaxConns int
	// MaxInFlight is the most requests handled at once; a request past it
	// is answered 503 with Retry-After: 1.
	MaxInFlight int
	// MaxHeaderBytes bounds a request's header section (request line
	// included); a request over it is answered 431 and its connection
	// closed, so that a connection costs the server at most this much
	// (plus net/http's 4 KiB of slack) while it sends headers. Headers
	// are read before any handler runs, so before a token is checked.
	MaxHeaderBytes int
}

// DefaultMaxHeaderBytes is the header bound of every listener mdap serves:
// a bearer token, a trace context and a browser's cookies fit many times
// over; 1,000 connections each sending endless headers cost the server
// about 20 MiB, not the gigabyte of net/http's default (1 MiB each).
const DefaultMaxHeaderBytes = 16 << 10

// Defaults are the bounds of a zero Limits field.
var Defaults = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       60 * time.Second,
	WriteTimeout:      10 * time.Minute,
	IdleTimeout:       2 * time.Minute,
	MaxConns:          1024,
	MaxInFlight:       256,
	MaxHeaderBytes:    DefaultMaxHeaderBytes,
}

// WithDefaults fills each zero field from def.
func (l Limits) WithDefaults(def Limits) Limits {
	pick := func(v, d time.Duration) time.Duration {
		if v == 0 {
			return d
		}
		return v
	}
	picki := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	l.ReadHeaderTimeout = pick(l.ReadHeaderTimeout, def.ReadHeaderTimeout)
	l.ReadTimeout = pick(l.ReadTimeout, def.ReadTimeout)
	l.WriteTimeout = pick(l.WriteTimeout, def.WriteTimeout)
	l.IdleTimeout = pick(l.IdleTimeout, def.IdleTimeout)
	l.MaxConns = picki(l.MaxConns, def.MaxConns)
	l.MaxInFlight = picki(l.MaxInFlight, def.MaxInFlight)
	l.MaxHeaderBytes = picki(l.MaxHeaderBytes, def.MaxHeaderBytes)
	return l
}

func nonNeg(d time.Duration) time.Duration { return max(d, 0) }

// Server returns an http.Server serving h within l (defaults filled from
// Defaults): its timeouts and header bound set, h behind the in-flight
// cap. Serve it on Listen's listener for the connection cap.
func (l Limits) Server(h http.Handler) *http.Server {
	l = l.WithDefaults(Defaults)
	hb := l.MaxHeaderBytes
	if hb < 0 {
		hb = 1 << 30 // "no bound": net/http takes 0 as its 1 MiB default
	}
	return &http.Server{
		MaxHeaderBytes:    hb,
		Handler:           InFlight(h, l.MaxInFlight),
		ReadHeaderTimeout: nonNeg(l.ReadHeaderTimeout),
		ReadTimeout:       nonNeg(l.ReadTimeout),
		WriteTimeout:      nonNeg(l.WriteTimeout),
		IdleTimeout:       nonNeg(l.IdleTimeout),
	}
}

// Listener wraps ln with l's connection cap.
func (l Limits) Listener(ln net.Listener) *Listener {
	return Listen(ln, l.WithDefaults(Defaults).MaxConns)
}

// InFlight runs h for at most max requests at once (max < 1: no bound);
// a request past it is answered 503 with Retry-After: 1 and a message.
func InFlight(h http.Handler, max int) http.Handler {
	if max < 1 {
		return h
	}
	slots := make(chan struct{}, max)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("503 service unavailable: this server handles at most %d requests at once; retry shortly", max), http.StatusServiceUnavailable)
		}
	})
}

// Listener is a net.Listener that keeps at most a cap of its connections
// open: past it, a connection is answered a 503 response and closed
// without reaching the server.
type Listener struct {
	net.Listener
	max     int
	open    atomic.Int64
	refused atomic.Uint64
}

// Listen wraps ln so that at most max connections are open at once
// (max < 1: no bound).
func Listen(ln net.Listener, max int) *Listener { return &Listener{Listener: ln, max: max} }

var busy = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 1\r\n")

// Accept returns the next connection within the cap.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.max < 1 || l.open.Add(1) <= int64(l.max) {
			return &conn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.refused.Add(1)
		msg := "503 service unavailable: this server keeps at most " + strconv.Itoa(l.max) + " connections open; retry shortly\n"
		_ = c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		resp := make([]byte, 0, len(busy)+len(msg)+32)
		resp = append(append(append(resp, busy...), "Content-Length: "+strconv.Itoa(len(msg))+"\r\n\r\n"...), msg...)
		_, _ = c.Write(resp)
		_ = c.Close()
	}
}

// Open is the number of connections open now; Refused those refused so
// far.
func (l *Listener) Open() int       { return int(l.open.Load()) }
func (l *Listener) Refused() uint64 { return l.refused.Load() }

type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
}

func (c *conn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
