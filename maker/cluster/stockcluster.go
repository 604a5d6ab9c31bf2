package cluster

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// A stock cluster: the configuration files of a cluster of stock
// nats-server nodes serving mdap's roles, and the credentials of its
// clients, written at once (maker nats config).

// StockClusterConfig describes a cluster of stock nats-server nodes on
// one machine's loopback (127.0.0.1), the way WriteStockCluster writes it.
type StockClusterConfig struct {
	// Nodes is the number of servers, 1 to MaxStockNodes; 0 means 3.
	Nodes int `flag:"nodes" usage:"the number of nats-server nodes"`
	// BasePort is node 1's client port: node k's client port is
	// BasePort+k-1 and its route port BasePort+Nodes+k-1. 0 means 4222.
	BasePort int `flag:"base-port" usage:"node 1's client port: clients listen on the ports from it up, routes on the next ones"`
	// Workers is the number of worker identities, each in a folder of its
	// own (creds/workerK); 0 means 3.
	Workers int `flag:"workers" usage:"the number of worker identities (DIR/creds/workerK, each its own key)"`
	// Name is the cluster's name; "" means "mdap".
	Name string `flag:"name" usage:"the cluster's name"`
}

// MaxStockNodes bounds StockClusterConfig.Nodes, and MaxStockWorkers its
// Workers.
const (
	MaxStockNodes   = 15
	MaxStockWorkers = 1000
)

// StockCluster is what WriteStockCluster wrote.
type StockCluster struct {
	// Dir is the cluster's folder (absolute).
	Dir string
	// Configs are the nodes' configuration files, DIR/node1.conf ...: start
	// node k with nats-server -c Configs[k-1].
	Configs []string
	// URLs are the client URLs, node by node: what --nats takes, joined by
	// commas.
	URLs []string
	// Creds is the folder of the coordinator's and the admin's seeds
	// (coordinator.nk, admin.nk): --nats-creds DIR/creds serves a
	// coordinator and maker nats provision.
	Creds string
	// WorkerCreds are the folders of each worker's seed (DIR/creds/workerK,
	// holding worker.nk): --nats-creds WorkerCreds[k-1] serves worker k.
	WorkerCreds []string
}

// DefaultStockCluster is the StockClusterConfig of the defaults its zero
// fields read as, written out (for a caller that shows them, as maker
// nats config's flags): 3 nodes from port 4222, 3 workers, named mdap.
func DefaultStockCluster() StockClusterConfig { return StockClusterConfig{}.withDefaults() }

func (c StockClusterConfig) withDefaults() StockClusterConfig {
	c.Nodes = cmpOr(c.Nodes, 3)
	c.BasePort = cmpOr(c.BasePort, 4222)
	c.Workers = cmpOr(c.Workers, 3)
	c.Name = cmpOr(c.Name, "mdap")
	return c
}

// Validate reports the first setting out of range as a *fielderr.Error
// (maker.FieldError) wrapping ErrConfig, naming the field
// ("cluster.StockClusterConfig: Nodes = 20: use 1 to 15 servers"), so
// that a caller maps it back to its own setting: Nodes, Workers,
// BasePort (every port of the cluster between 1 and 65535) or a Name
// that is not 1 to 64 letters, digits, '-' or '_'. Zero is a field's
// default; a negative value is refused.
func (c StockClusterConfig) Validate() error {
	const cfg = "cluster.StockClusterConfig"
	d := c.withDefaults()
	switch {
	case c.Nodes < 0 || d.Nodes > MaxStockNodes:
		return fielderr.New(cfg, "Nodes", c.Nodes, fmt.Sprintf("use 1 to %d servers", MaxStockNodes))
	case c.Workers < 0 || d.Workers > MaxStockWorkers:
		return fielderr.New(cfg, "Workers", c.Workers, fmt.Sprintf("use 1 to %d worker identities", MaxStockWorkers))
	case c.BasePort < 0 || d.BasePort+2*d.Nodes-1 > 65535:
		return fielderr.New(cfg, "BasePort", c.BasePort, fmt.Sprintf("the %d ports from it up must lie between 1 and 65535", 2*d.Nodes))
	case checkName("cluster", d.Name) != nil:
		return fielderr.New(cfg, "Name", c.Name, "use 1 to 64 letters, digits, '-' or '_'")
	}
	return nil
}

// WriteStockCluster writes into dir, for a cluster of cfg.Nodes stock
// nats-server nodes (2.11 or later) on loopback: DIR/nodeK.conf for each
// node (its server name, its JetStream store DIR/nodeK, client and route
// ports, the cluster's name and routes with a route password of its own,
// and the accounts block of StockAuthConfig), and the credentials of
// its clients: DIR/creds with coordinator.nk and admin.nk, and
// DIR/creds/workerK/worker.nk for each of cfg.Workers workers (each its
// own key; creds/worker.pub lists them all). Files are mode 0600 and
// folders 0700: the configuration files hold the route password.
//
// Nothing is half-written: everything is written into a new folder beside
// dir, which is then renamed to dir. A dir that exists and is not empty
// is refused (ErrConfig) unless replace is true; then it is replaced
// whole, the JetStream stores in it included. Errors wrap ErrConfig (a
// setting out of range, a dir not empty) or ErrAuth (a file that could
// not be written, a key that could not be made).
func WriteStockCluster(dir string, cfg StockClusterConfig, replace bool) (StockCluster, error) {
	if err := cfg.Validate(); err != nil {
		return StockCluster{}, err
	}
	cfg = cfg.withDefaults()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return StockCluster{}, fmt.Errorf("%w: folder %q: %w", ErrConfig, dir, err)
	}
	entries, err := os.ReadDir(abs)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return StockCluster{}, fmt.Errorf("%w: folder %s: %w", ErrConfig, abs, err)
	case len(entries) > 0 && !replace:
		return StockCluster{}, fmt.Errorf("%w: %s exists and is not empty: choose another folder, or replace it whole (its stores included)", ErrConfig, abs)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return StockCluster{}, fmt.Errorf("%w: folder %s: %w", ErrAuth, filepath.Dir(abs), err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".tmp-*")
	if err != nil {
		return StockCluster{}, fmt.Errorf("%w: folder beside %s: %w", ErrAuth, abs, err)
	}
	defer os.RemoveAll(tmp) // nothing left after a rename; everything after a failure
	out, err := writeStockCluster(tmp, abs, cfg)
	if err != nil {
		return StockCluster{}, err
	}
	if exists {
		// The old folder goes aside first, so dir is never half of each.
		old := tmp + ".old"
		if err := os.Rename(abs, old); err != nil {
			return StockCluster{}, fmt.Errorf("%w: replace %s: %w", ErrAuth, abs, err)
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, abs); err != nil {
		return StockCluster{}, fmt.Errorf("%w: rename %s to %s: %w", ErrAuth, tmp, abs, err)
	}
	return out, nil
}

// writeStockCluster writes the cluster into tmp, naming its final place
// abs in what it writes (the stores' paths).
func writeStockCluster(tmp, abs string, cfg StockClusterConfig) (StockCluster, error) {
	out := StockCluster{Dir: abs, Creds: filepath.Join(abs, "creds")}
	creds := filepath.Join(tmp, "creds")
	if err := os.Mkdir(creds, 0o700); err != nil {
		return out, fmt.Errorf("%w: %w", ErrAuth, err)
	}
	// Each worker its own key; worker.pub lists them, so that
	// EnsureCredentials makes no shared worker.nk.
	var workerPubs []string
	for k := 1; k <= cfg.Workers; k++ {
		wdir := filepath.Join(creds, "worker"+strconv.Itoa(k))
		if err := os.Mkdir(wdir, 0o700); err != nil {
			return out, fmt.Errorf("%w: %w", ErrAuth, err)
		}
		if err := generate(wdir, RoleWorker); err != nil {
			return out, err
		}
		pubs, err := readPubs(PubFile(wdir, RoleWorker))
		if err != nil {
			return out, err
		}
		workerPubs = append(workerPubs, pubs...)
		out.WorkerCreds = append(out.WorkerCreds, filepath.Join(out.Creds, "worker"+strconv.Itoa(k)))
	}
	if err := writeSecret(PubFile(creds, RoleWorker), []byte(strings.Join(workerPubs, "\n")+"\n")); err != nil {
		return out, err
	}
	keys, _, err := EnsureCredentials(creds)
	if err != nil {
		return out, err
	}
	auth := StockAuthConfig(keys)
	password, err := routePassword()
	if err != nil {
		return out, err
	}
	clientPort := func(k int) int { return cfg.BasePort + k - 1 }
	routePort := func(k int) int { return cfg.BasePort + cfg.Nodes + k - 1 }
	for k := 1; k <= cfg.Nodes; k++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# node %d of the mdap cluster %q (maker nats config): nats-server -c node%d.conf\n", k, cfg.Name, k)
		fmt.Fprintf(&b, "server_name: %q\n", fmt.Sprintf("%s-n%d", cfg.Name, k))
		fmt.Fprintf(&b, "listen: \"127.0.0.1:%d\"\n", clientPort(k))
		fmt.Fprintf(&b, "jetstream {\n  store_dir: %q\n}\n", filepath.Join(abs, "node"+strconv.Itoa(k)))
		if cfg.Nodes > 1 {
			fmt.Fprintf(&b, "cluster {\n  name: %q\n  listen: \"127.0.0.1:%d\"\n", cfg.Name, routePort(k))
			fmt.Fprintf(&b, "  # every route signs in: without it any local process could join as a server\n")
			fmt.Fprintf(&b, "  authorization { user: \"route\", password: %q }\n  routes = [\n", password)
			for j := 1; j <= cfg.Nodes; j++ {
				if j != k {
					fmt.Fprintf(&b, "    %q\n", fmt.Sprintf("nats-route://route:%s@127.0.0.1:%d", password, routePort(j)))
				}
			}
			b.WriteString("  ]\n}\n")
		}
		b.WriteString(auth)
		name := "node" + strconv.Itoa(k) + ".conf"
		if err := writeSecret(filepath.Join(tmp, name), []byte(b.String())); err != nil {
			return out, err
		}
		out.Configs = append(out.Configs, filepath.Join(abs, name))
		out.URLs = append(out.URLs, fmt.Sprintf("nats://127.0.0.1:%d", clientPort(k)))
	}
	return out, nil
}

// routePassword is a fresh random password for the routes between the
// nodes: 24 random bytes, URL-safe.
func routePassword() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("%w: route password: %w", ErrAuth, err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}
