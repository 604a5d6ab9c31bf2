package cluster

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/all" // every provider a spec may name
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tmc/langchaingo/llms"
)

// MinRetention is the shortest CoordinatorConfig.Keep: what a run
// creates on the engine must outlive its start.
const MinRetention = time.Minute

// CoordinatorConfig are the settings of a coordinator that draws its
// samples from the engine's workers (maker hanoi --nats): where the
// engine is, how long what the run creates there is kept, its run and how
// many distinct workers must vote. It validates itself (Validate).
type CoordinatorConfig struct {
	// URL is the engine's client URL: nats://HOST:PORT, several
	// separated by commas (CheckURL).
	URL string `flag:"nats" usage:"NATS URL (e.g. nats://127.0.0.1:4222): draw the samples through maker workers instead of calling the model"`
	// Keep is the retention of what the run creates on the engine (its
	// journal, a batch's task queue and results): at least MinRetention.
	Keep time.Duration `flag:"nats-keep" usage:"retention of what this run creates on the engine (its journal, a batch's task queue and results); remove it sooner with maker nats rm RUN"`
	// MinWorkers is the least distinct worker identities a step's winning
	// votes must come from: 1 to vote.MaxVoters, or 0 for the default
	// (MinVoters, followed with FollowVoters every VotersEvery).
	MinWorkers int `flag:"min-workers" usage:"with --nats: decide a step only when its winning votes come from at least N distinct worker identities (credentials), spreading each step's samples over the workers; 0 (the default) is 2 while at least 2 worker identities serve the route, else 1, looked at again between steps every 5s (maker solve: any worker); a worker whose answers lose far more often than its peers' is quarantined (see docs/nats.md)"`
	// Run is the run whose journal is kept on the engine; "" for none.
	Run string
	// Creds is the credential OpenCoordinator signs in with
	// (ClientCreds.SignIn): in a folder, the key of Creds.Run.
	Creds ClientCreds `flags:"Creds."`
	// Name names the connection on the server; "" means "maker
	// coordinator".
	Name string
	// Timeout bounds one sample, queueing included
	// (DrawerConfig.Timeout); 0 means DefaultTimeout.
	Timeout time.Duration
	// Unsigned opts the run's journals out of signing
	// (JournalConfig.Unsigned, BatchConfig.UnsignedJournals).
	Unsigned bool
	// Logger receives the Drawer's warnings (a worker quarantined); nil
	// means none.
	Logger *slog.Logger
}

// Validate reports the first setting that cannot run as a
// *fielderr.Error wrapping ErrConfig that names the field ("MinWorkers",
// "URL", "Keep", "Run", "Timeout"), without connecting. MinWorkers is checked first.
func (c CoordinatorConfig) Validate() error {
	const cfg = "cluster.CoordinatorConfig"
	switch {
	case c.MinWorkers < 0 || c.MinWorkers > vote.MaxVoters:
		return fielderr.New(cfg, "MinWorkers", c.MinWorkers, fmt.Sprintf("use 1 to %d distinct workers, or 0 for the default (2 where 2 serve)", vote.MaxVoters))
	case CheckURL(c.URL) != nil:
		return fielderr.New(cfg, "URL", c.URL, "want nats://HOST:PORT (several separated by commas), as printed by maker nats")
	case c.Keep < MinRetention:
		return fielderr.New(cfg, "Keep", c.Keep, fmt.Sprintf("use at least %s (the default keeps %s)", "1m", DefaultRetention))
	case c.Run != "" && CheckRunName(c.Run) != nil:
		return fielderr.New(cfg, "Run", c.Run, "a run is named 1 to 64 letters, digits, '-' or '_'")
	case c.Timeout < 0:
		return fielderr.New(cfg, "Timeout", c.Timeout, "use a positive duration, or 0 for the default")
	}
	return nil
}

// Coordinator is one run's side of the engine, as a command opens it from
// its settings: a connection signed in as a coordinator
// (OpenCoordinator), the Drawer its samples are drawn through with the
// least distinct voters its steps need (Draw), its journal (Journal), a
// batch's task queue and the batch itself (OpenTaskQueue, SolveBatch).
//
// Close releases what it opened: the Drawer (failing the calls in flight
// and withdrawing their jobs), then the connection, once what was
// published is flushed. A journal it opened is the caller's, to close
// before Close. Its setup (OpenCoordinator, Draw) is for one goroutine;
// the Drawer is safe for concurrent use.
type Coordinator struct {
	cfg       CoordinatorConfig
	nc        *nats.Conn
	js        jetstream.JetStream
	drawer    *Drawer
	minVoters int
	follow    func(context.Context) int
}

// OpenCoordinator checks cfg (Validate) and connects to the engine at
// cfg.URL as a coordinator signed in with cfg.Creds (Dial); it creates
// nothing on the engine. Errors: Validate's *fielderr.Error and SignIn's,
// both wrapping ErrConfig, before any connection; a server that refused
// the credential or did not answer wraps ErrEngine, its text ending with
// ConnectHint's advice.
func OpenCoordinator(cfg CoordinatorConfig) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	nc, js, err := Dial(cfg.URL, cfg.Creds, RoleCoordinator, cmp.Or(cfg.Name, "maker coordinator"))
	if err != nil {
		return nil, err
	}
	return &Coordinator{cfg: cfg, nc: nc, js: js, minVoters: cfg.MinWorkers}, nil
}

// Draw returns the coordinator's Drawer, opened by its first call (later
// calls return it, whatever their route), and settles the least distinct
// worker identities a step's winning votes come from (MinVoters,
// FollowVoters). With a route and MinWorkers 0 it is the package's
// MinVoters for the workers serving route, followed between steps
// (FollowVoters, every VotersEvery, one agent request each); with route
// "" (a batch, whose tasks' routes vary) it is MinWorkers as given, 0
// being any worker. Samples are spread over the workers
// (DrawerConfig.Spread) when more than one voter is needed, or may be
// later. Errors are NewDrawer's.
func (c *Coordinator) Draw(ctx context.Context, route string) (*Drawer, error) {
	if c.drawer != nil {
		return c.drawer, nil
	}
	if route != "" && c.cfg.MinWorkers == 0 {
		c.minVoters = MinVoters(ctx, c.nc, route)
		c.follow = FollowVoters(c.minVoters, VotersEvery, func(ctx context.Context) (int, error) {
			return ServingWorkers(ctx, c.nc, route)
		})
	}
	// Under MinWorkers 0 a second worker may join later: the samples are
	// spread from the start, or one greedy worker would take every wave
	// and the second voter never come.
	d, err := NewDrawer(ctx, c.js, DrawerConfig{Timeout: c.cfg.Timeout, Spread: c.minVoters > 1 || c.follow != nil, Logger: c.cfg.Logger})
	if err != nil {
		return nil, err
	}
	c.drawer = d
	return d, nil
}

// MinVoters is the least distinct voters Draw settled on (MinWorkers
// before Draw); 0 is any worker.
func (c *Coordinator) MinVoters() int { return c.minVoters }

// FollowVoters is the maker.Solver.MinVoters Draw made for its route
// under MinWorkers 0 (the package's FollowVoters); nil otherwise.
func (c *Coordinator) FollowVoters() func(context.Context) int { return c.follow }

// Journal opens the journal of cfg.Run on the engine (OpenRunJournal)
// with cfg.Keep and cfg.Unsigned: created, or with resume opened to go
// on, waiting for the lease of a coordinator that died after telling
// onLocked how long. Errors: ErrConfig without a Run; OpenRunJournal's.
func (c *Coordinator) Journal(ctx context.Context, resume bool, onLocked func(wait time.Duration)) (*journal.Journal, error) {
	if c.cfg.Run == "" {
		return nil, fmt.Errorf("%w: cluster.CoordinatorConfig: Run is empty: name the run whose journal to open", ErrConfig)
	}
	return OpenRunJournal(ctx, c.js, c.cfg.Run, resume, JournalConfig{MaxAge: c.cfg.Keep, Unsigned: c.cfg.Unsigned}, onLocked)
}

// OpenTaskQueue opens (or creates, kept cfg.Keep) the task queue name:
// the package's OpenTaskQueue, with its errors (ErrAuth for a run key
// of another queue).
func (c *Coordinator) OpenTaskQueue(ctx context.Context, name string) (*TaskQueue, error) {
	return OpenTaskQueue(ctx, c.js, name, TaskQueueConfig{MaxAge: c.cfg.Keep})
}

// OpenBatchQueue returns the task queue of the batch of tasksFile, as a
// command starts one: queue when given, else the queue named after the
// file's content and r's settings (RunBatchQueueName), so that every
// coordinator started on the same file and settings shares it. It opens
// the queue once within SetupTimeout (OpenTaskQueue), so that a
// credential the queue refuses (a run key of another queue) is met
// before the batch writes anything. Errors: the file's read as os.ReadFile
// returns it (a *fs.PathError), RunBatchQueueName's, OpenTaskQueue's
// (ErrAuth for a run key of another queue).
func (c *Coordinator) OpenBatchQueue(ctx context.Context, tasksFile, queue string, r runsetup.Run) (string, error) {
	if queue == "" {
		content, err := os.ReadFile(tasksFile)
		if err != nil {
			return "", err
		}
		if queue, err = RunBatchQueueName(content, r); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, SetupTimeout)
	defer cancel()
	_, err := c.OpenTaskQueue(ctx, queue)
	return queue, err
}

// SolveBatch is the package's SolveBatch on the coordinator's engine,
// with cfg's MaxAge, UnsignedJournals and Drawer its own (Keep, Unsigned
// and the Drawer Draw opened, if any). Errors are SolveBatch's.
func (c *Coordinator) SolveBatch(ctx context.Context, cfg BatchConfig) (batch.Summary, error) {
	cfg.MaxAge, cfg.UnsignedJournals, cfg.Drawer = c.cfg.Keep, c.cfg.Unsigned, c.drawer
	return SolveBatch(ctx, c.js, cfg)
}

// Connected is nil while the connection is up (or c is nil: nothing
// opened), else an error naming its status: a readiness probe. It costs
// no request.
func (c *Coordinator) Connected() error {
	if c == nil {
		return nil
	}
	return connected(c.nc)
}

// connected is nil while nc is up (or was never opened).
func connected(nc *nats.Conn) error {
	if nc == nil || nc.IsConnected() {
		return nil
	}
	return fmt.Errorf("NATS engine not connected (%s)", nc.Status())
}

// Close closes the Drawer, then flushes and closes the connection. It is
// safe to call more than once, and on a nil Coordinator (nothing to
// close). Errors are the Drawer's Close's.
func (c *Coordinator) Close() error {
	if c == nil {
		return nil
	}
	var err error
	if c.drawer != nil {
		err = c.drawer.Close()
	}
	_ = c.nc.Flush()
	c.nc.Close()
	return err
}

// VotersEvery is how often FollowVoters asks again how many worker
// identities serve a route: an agent request, beside a step's many
// samples.
const VotersEvery = 5 * time.Second

// votersOf is the default minimum when w worker identities serve a
// route: two where two serve, else one.
func votersOf(w int) int { return min(max(w, 1), 2) }

// MinVoters is the default least number of distinct worker identities a
// step's winning votes come from on route: 2 when ServingWorkers counts
// at least two identities serving it, else 1 (1 too when the engine did
// not answer). It costs one agent request.
func MinVoters(ctx context.Context, nc *nats.Conn, route string) int {
	if w, err := ServingWorkers(ctx, nc, route); err == nil {
		return votersOf(w)
	}
	return 1
}

// FollowVoters returns a maker.Solver.MinVoters that starts at start and,
// once every has passed since it last asked, asks count (how many worker
// identities serve the route: ServingWorkers) again and follows it as
// MinVoters does: a run goes on when one of two workers leaves, and rests
// on two once a second serves. A count that fails leaves the number as it
// was: a moment's hiccup does not drop a second voter. The function is
// for one goroutine (the solving one).
func FollowVoters(start int, every time.Duration, count func(context.Context) (int, error)) func(context.Context) int {
	asked, now := time.Now(), start
	return func(ctx context.Context) int {
		if time.Since(asked) < every {
			return now
		}
		asked = time.Now()
		if w, err := count(ctx); err == nil {
			now = votersOf(w)
		}
		return now
	}
}

// SpecPrice is the price of the calls the workers of the model spec
// names make, for a coordinator that counts what a run over the engine
// costs as it would in process: the spec's own (=IN/OUT), else the
// built-in list price (models.BuiltinPrice) with in and out over it where
// positive. It is not ok when none is known: the simulated model, a
// spec that does not parse, an unknown model without in or out.
func SpecPrice(spec string, in, out float64) (maker.Price, bool) {
	sp, err := models.ParseSpec(spec)
	if err != nil || sp.Provider == "sim" {
		return maker.Price{}, false
	}
	if sp.Price != nil {
		return *sp.Price, true
	}
	p, ok := models.BuiltinPrice(sp.Provider, sp.Name)
	if in > 0 {
		p.InputPerMillion, ok = in, true
	}
	if out > 0 {
		p.OutputPerMillion, ok = out, true
	}
	return p, ok
}

// pricedModel is a Drawer's model with a price: every method of *Model
// kept, and maker.Priced.
type pricedModel struct {
	*Model
	price maker.Price
}

// Price implements maker.Priced.
func (m pricedModel) Price() maker.Price { return m.price }

// Priced is m with the price p: a model that implements maker.Priced,
// so that a run's cost counts what the workers' calls cost (a Drawer's
// model has no price of its own), and keeps every other method of m.
func Priced(m *Model, p maker.Price) llms.Model { return pricedModel{m, p} }

// SpecModel is d's model of route as a coordinator whose --model is spec
// uses it: with native tools when route is a spec whose provider takes
// them (WithNativeTools), and priced by SpecPrice(spec, in, out) when a
// price is known (maker.Priced), so that a cost cap counts what the
// workers' calls cost. Errors are Drawer.Model's.
func (d *Drawer) SpecModel(route, spec string, in, out float64) (llms.Model, error) {
	sp, err := models.ParseSpec(route)
	m, err := d.Model(route, WithNativeTools(err == nil && sp.NativeTools()))
	if err != nil {
		return nil, err
	}
	if p, ok := SpecPrice(spec, in, out); ok {
		return Priced(m, p), nil
	}
	return m, nil
}

// JobModels is a batch's model function (batch.Builtin.Model) over d,
// for a run whose one model is r's: each job's samples drawn by the
// workers of its route (r.Route at the job's seed and oracle), priced as
// SpecModel prices r's spec at r's prices.
//
// Errors, of a job: a job other than "hanoi" on the simulated model (the
// workers' simulated model answers Towers of Hanoi only: a spec's script
// does not travel); r.Route's; SpecModel's.
func (d *Drawer) JobModels(r runsetup.Run) func(batch.Job, sim.Oracle, uint64) (llms.Model, error) {
	return func(job batch.Job, oracle sim.Oracle, seed uint64) (llms.Model, error) {
		if r.Models[0] == "sim" && job.Kind() != "hanoi" {
			return nil, errors.New("over --nats the workers' simulated model answers Towers of Hanoi only (a spec's script does not travel): run spec tasks over --nats with a real --model")
		}
		g := r
		g.Sim.Seed = seed
		route, err := g.Route(oracle)
		if err != nil {
			return nil, err
		}
		return d.SpecModel(route, r.Models[0], r.Settings.InputPrice, r.Settings.OutputPrice)
	}
}

// SimRoleModels is a batch's role models (batch.Builtin.RoleModels) over
// d when the workers' simulated model plays every role: a "multiply" or
// "sort" job's roles all drawn from the workers playing its family at its
// seed (seed without a "seed" of its own), the route the identity of
// problems.SimModels(family, roles)'s OneModel, priced as SpecModel prices
// spec at in and out.
//
// Errors, of a job: a "problem" job (the workers play the built-in
// families, not a problem spec's prompts); problems.SimModels';
// SpecModel's.
func (d *Drawer) SimRoleModels(roles decompose.SimConfig, seed uint64, spec string, in, out float64) func(batch.Job) (map[decompose.Role]llms.Model, error) {
	return func(job batch.Job) (map[decompose.Role]llms.Model, error) {
		if job.Kind() == "problem" {
			return nil, errors.New(`a "problem" task over --nats needs a real --model: the workers' simulated model (maker worker --roles) plays the roles of multiply and sort, not a problem spec's; run it without --nats, or with the --model the workers serve`)
		}
		cfg := roles
		if cfg.Seed = seed; job.Seed != nil {
			cfg.Seed = *job.Seed
		}
		sims, err := problems.SimModels(job.Kind(), cfg)
		if err != nil {
			return nil, err
		}
		m, err := d.SpecModel(maker.ModelIdentity(sims.OneModel()), spec, in, out)
		if err != nil {
			return nil, err
		}
		return decompose.AllRoles(m), nil
	}
}

// OpenRunJournal opens the journal of run on the engine: created, or with
// resume opened to go on. A resume that finds the run locked calls
// onLocked with how long it waits, then waits for the lease of a
// coordinator that died (at most DefaultLeaseTTL and 2 s). Errors are
// CreateJournal's and OpenJournal's.
func OpenRunJournal(ctx context.Context, js jetstream.JetStream, run string, resume bool, cfg JournalConfig, onLocked func(wait time.Duration)) (*journal.Journal, error) {
	open := CreateJournal
	if resume {
		open = OpenJournal
	}
	j, err := open(ctx, js, run, cfg)
	if errors.Is(err, journal.ErrLocked) && resume {
		wait := DefaultLeaseTTL + 2*time.Second
		onLocked(wait)
		cfg.WaitLock = wait
		j, err = open(ctx, js, run, cfg)
	}
	return j, err
}

// RunBatchQueueName is BatchQueueName for a batch of r's runs: the route
// its workers meet on (r.Route, with the Towers of Hanoi oracle: the
// simulated model's identity does not depend on it) and r's k, reply cap
// and seed, so that every coordinator of the same tasks file and
// settings, a command's or a library user's, meets on one queue.
// Errors: r.Route's.
func RunBatchQueueName(content []byte, r runsetup.Run) (string, error) {
	route, err := r.Route(hanoi.Oracle{})
	if err != nil {
		return "", err
	}
	return BatchQueueName(content, route, r.Settings.Margin.K, r.Settings.MaxTokens, r.Sim.Seed), nil
}

// BatchQueueName is the task queue every coordinator of one batch shares
// when none is named: "solve-" and 12 hex digits of a hash of the tasks
// file's content, the route, and the settings k, maxTokens and seed. The
// same inputs give the same name; another content, route or setting
// another name.
func BatchQueueName(content []byte, route string, k, maxTokens int, seed uint64) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00k=%d max_tokens=%d seed=%d\x00", content, route, k, maxTokens, seed)
	return "solve-" + hex.EncodeToString(h.Sum(nil)[:6])
}
