package cluster

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/internal/loopback"
	"github.com/nats-io/nats-server/v2/server"
)

// monitor sets the server's HTTP monitoring port (/varz, /jsz, /healthz
// of the NATS server) from addr, HOST:PORT; a port alone means loopback,
// and any other host is refused: the endpoints have no authentication.
// Empty leaves it off.
func monitor(opts *server.Options, addr string) error {
	if addr == "" {
		return nil
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr // a port alone, as --metrics-addr takes it
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: monitoring address %q: %v; want HOST:PORT such as 127.0.0.1:8222", ErrConfig, addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return fmt.Errorf("%w: monitoring address %q: the port must be 0 to 65535", ErrConfig, addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !loopback.Host(host) {
		return fmt.Errorf("%w: monitoring address %q: the NATS server's monitoring endpoints have no authentication and show its connections and streams, so they listen on loopback only (127.0.0.1, ::1, localhost); reach them from elsewhere through an authenticating proxy or an SSH tunnel", ErrConfig, addr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts.HTTPHost, opts.HTTPPort = host, port
	return nil
}

// MonitorURL is the NATS server's monitoring URL (ServerConfig.Monitor),
// such as http://127.0.0.1:8222, or "" when it has none.
func (s *Server) MonitorURL() string {
	a := s.ns.MonitorAddr()
	if a == nil {
		return ""
	}
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(a.Port))
}

// Ready returns nil while the server accepts clients with JetStream on.
func (s *Server) Ready() error {
	if !s.ns.Running() || !s.ns.ReadyForConnections(0) {
		return errors.New("the NATS server is not accepting clients")
	}
	if !s.ns.JetStreamEnabled() {
		return errors.New("JetStream is off")
	}
	return nil
}

// CheckMonitor returns the error StartServer would give for addr as
// ServerConfig.Monitor, without starting anything, so a command can refuse
// a bad address before it writes a file. Errors wrap ErrConfig.
func CheckMonitor(addr string) error { return monitor(&server.Options{}, addr) }
