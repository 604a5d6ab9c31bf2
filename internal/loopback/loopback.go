// Package loopback is the one test of whether a listening host is reachable
// from this machine only, for every listener that defaults to loopback
// (the metrics endpoint, NATS monitoring, MCP over HTTP).
package loopback

import (
	"net"
	"strings"
)

// Host reports whether host, as in HOST:PORT, names the loopback interface
// only: "localhost" (in any case), 127.0.0.0/8 or ::1. An empty host is
// not loopback (it means every interface to net.Listen): callers that
// read an empty host as loopback say so themselves.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
