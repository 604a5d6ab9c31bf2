package observe

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/mdap-go/mdap/internal/loopback"
)

// ErrToken: a metrics bearer token that cannot guard an endpoint (empty,
// too long, or holding spaces or control characters).
var ErrToken = errors.New("invalid metrics token")

// maxTokenBytes bounds a bearer token, against a file or variable given by
// mistake.
const maxTokenBytes = 4096

// CheckToken reports whether token can guard an endpoint: 1 to 4096
// printable ASCII characters without spaces (what an HTTP Authorization
// header carries verbatim). Errors wrap ErrToken.
func CheckToken(token string) error {
	if token == "" {
		return fmt.Errorf("%w: empty", ErrToken)
	}
	if len(token) > maxTokenBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrToken, len(token), maxTokenBytes)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("%w: byte %d is a space, a control character or not ASCII", ErrToken, i+1)
		}
	}
	return nil
}

// Authenticated guards h with a bearer token: every request must carry
// "Authorization: Bearer TOKEN" or is answered 401 with a
// WWW-Authenticate challenge, except GET and HEAD /healthz, which stay
// open so that a liveness probe needs no secret (it says only "ok").
// The token is compared in constant time. Prometheus sends it with
// authorization.credentials_file in its scrape configuration.
//
// Errors: ErrToken (see CheckToken).
func Authenticated(h http.Handler, token string) (http.Handler, error) {
	if err := CheckToken(token); err != nil {
		return nil, err
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			h.ServeHTTP(w, r)
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mdap metrics"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// Loopback reports whether addr (as ListenAddr resolves it) listens on the
// loopback interface only: 127.0.0.0/8, ::1 or localhost. Any other host,
// including 0.0.0.0, an empty IPv6 wildcard and every other name, is
// reachable from other machines.
//
// Errors: ErrAddr, as ListenAddr.
func Loopback(addr string) (bool, error) {
	addr, err := ListenAddr(addr)
	if err != nil {
		return false, err
	}
	host, _, _ := net.SplitHostPort(addr)
	return loopback.Host(host), nil
}
