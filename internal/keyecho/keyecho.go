// Package keyecho is a test server for the redaction tests: an
// OpenAI-compatible endpoint that refuses every key and echoes it in its
// error, as some model servers do.
package keyecho

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// NewServer starts a loopback server, closed when t ends, that answers
// every request 401 with an OpenAI error whose message holds the
// request's Authorization header, written as a JSON string (so a key
// with a quote in it comes back whole).
func NewServer(t testing.TB) *httptest.Server {
	t.Helper()
	return newServer(t, func(s string) string { return s })
}

// NewPercentServer is NewServer echoing the Authorization header
// percent-encoded, as a server that quotes it in a URL or a form does
// (sk-a+b/c as sk-a%2Bb%2Fc).
func NewPercentServer(t testing.TB) *httptest.Server {
	t.Helper()
	return newServer(t, url.QueryEscape)
}

func newServer(t testing.TB, encode func(string) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg, err := json.Marshal("Incorrect API key provided: " + encode(r.Header.Get("Authorization")))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error","code":"invalid_api_key"}}`, msg)
	}))
	t.Cleanup(srv.Close)
	return srv
}
