package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// SetupTimeout bounds what a command does at its start on the engine:
// connecting, provisioning, opening a Drawer or a task queue.
const SetupTimeout = 30 * time.Second

// FieldFailure is a failure of what an accepted setting names, met while
// running: the engine at URL did not answer, the consumer of one of
// Routes could not be made. Field is the setting's name in its
// configuration, as its Validate names one in a *fielderr.Error ("URL",
// "Routes"), so that a caller says the failure in its own terms (a
// command: the flag); an empty Field is a failure of the run itself
// (a worker's Run). It is a failure of the run, never a refused
// configuration, whatever Err wraps; errors.Is and errors.As see Err.
type FieldFailure struct {
	Field string
	Err   error
}

// Error is Err's text: the caller names the field its own way.
func (e *FieldFailure) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *FieldFailure) Unwrap() error { return e.Err }

// failedAt is err as a *FieldFailure of field, or nil.
func failedAt(field string, err error) error {
	if err == nil {
		return nil
	}
	return &FieldFailure{Field: field, Err: err}
}

// AdminConfig is where the admin's side of the engine connects (maker
// nats ls, rm, provision): the engine's URL and the admin's credential
// (no other role may list or provision the engine).
type AdminConfig struct {
	URL   string      `flag:"nats" usage:"NATS URL of the engine"`
	Creds ClientCreds `flags:"Creds."`
}

// DefaultAdmin is the AdminConfig of the commands' defaults: the engine
// at DefaultAddr, the credential ClientCreds.Resolve finds.
func DefaultAdmin() AdminConfig { return AdminConfig{URL: "nats://" + DefaultAddr} }

// Open is OpenAdmin(c.URL, c.Creds), with its errors.
func (c AdminConfig) Open() (*Admin, error) { return OpenAdmin(c.URL, c.Creds) }

// AgentConfig are the settings of an admin that provisions a stock
// nats-server and serves the agent there (maker nats provision): where
// the engine is, what it provisions, the routes whose consumers it makes
// now, and whether it stops there (Once) instead of serving workers' and
// coordinators' requests. It validates itself (Validate); RunAgent runs
// it.
type AgentConfig struct {
	AdminConfig
	ProvisionConfig
	// Routes are the routes whose consumers are made at once (ProvisionRoute).
	Routes []string `flag:"route" usage:"provision the consumer of this route now (the model the workers serve; repeatable)"`
	// Once provisions and returns, serving nothing.
	Once bool `flag:"once" usage:"provision and exit, instead of serving workers' requests"`
}

// DefaultAgent is the AgentConfig of maker nats provision's defaults:
// DefaultAdmin, DefaultProvision on disk (DurableSamples: a stock server
// is provisioned once, not at each start), serving.
func DefaultAgent() AgentConfig {
	c := AgentConfig{AdminConfig: DefaultAdmin(), ProvisionConfig: DefaultProvision()}
	c.DurableSamples = true
	return c
}

// Validate reports the first setting that cannot run as a
// *fielderr.Error wrapping ErrConfig: ProvisionConfig.Validate's, or an
// empty route (naming "Routes"). The URL and credential are checked when
// RunAgent connects (OpenAdmin).
func (c AgentConfig) Validate() error {
	if err := c.ProvisionConfig.Validate(); err != nil {
		return err
	}
	for _, r := range c.Routes {
		if r == "" {
			return fielderr.New("cluster.AgentConfig", "Routes", r, "name the model the workers serve (maker worker prints it)")
		}
	}
	return nil
}

// RunAgent validates c, connects as the admin, provisions the engine
// (ProvisionWhenReady, within SetupTimeout) with each run key's budget
// read from the credentials folder c.Creds names, if it names one, and
// the consumer of each of c.Routes; it writes a line to out for each.
// Unless c.Once it then serves the agent (ServeAgent) until ctx ends,
// saying so through notef. Errors: Validate's; OpenAdmin's and
// ProvisionWhenReady's as they are (ErrConfig and ErrAuth among them: the
// engine refused the settings or the credential); a route's consumer or
// the agent that failed is a *FieldFailure of "Routes" or "URL".
func RunAgent(ctx context.Context, c AgentConfig, out io.Writer, notef func(format string, args ...any)) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if dir, _ := c.Creds.Resolve(); dir != "" {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			c.RunKeyBytesOf = RunKeyBytesIn(dir) // the run keys' budgets (maker nats run add RUN --bytes)
		}
	}
	a, err := c.Open()
	if err != nil {
		return err
	}
	defer a.Close()
	nc, js := a.Conn()
	sctx, cancel := context.WithTimeout(ctx, SetupTimeout)
	defer cancel()
	if err := ProvisionWhenReady(sctx, js, c.ProvisionConfig); err != nil {
		return err
	}
	fmt.Fprintf(out, "provisioned the streams %s, %s, %s, %s and the buckets %s, %s (%d replicas)\n", JobsStream, RepliesStream, JournalsStream, TasksStream, LeaseBucket, ResultsBucket, c.Replicas)
	for _, r := range c.Routes {
		if err := ProvisionRoute(sctx, js, r, c.ProvisionConfig); err != nil {
			return failedAt("Routes", err)
		}
		fmt.Fprintf(out, "provisioned the consumer of route %q\n", r)
	}
	if c.Once {
		return nil
	}
	agent, err := ServeAgent(ctx, nc, c.ProvisionConfig)
	if err != nil {
		return failedAt("URL", err)
	}
	defer agent.Stop()
	notef("serving workers' and coordinators' requests on %s; stop with Ctrl-C", c.URL)
	<-ctx.Done()
	notef("stopping")
	return nil
}
