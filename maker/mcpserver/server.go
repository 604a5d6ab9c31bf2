package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/internal/buildinfo"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/internal/secrets"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors, for errors.Is. A tool's error reaches the client as a tool
// error whose text is the error's message.
var (
	// ErrConfig: New was given a configuration it cannot serve with.
	ErrConfig = fielderr.ErrConfig
	// ErrArgument: a tool argument is out of range or inconsistent (the
	// SDK refuses schema violations before a handler runs).
	ErrArgument = errors.New("bad argument")
	// ErrModelNotAllowed: a request names a model or a base URL that the
	// operator did not allow.
	ErrModelNotAllowed = errors.New("model not allowed")
	// ErrOutsideRoot: a spec path is absolute, climbs out of the root or
	// leads out of it through a symbolic link.
	ErrOutsideRoot = errors.New("path outside the root")
	// ErrNoState: run_task needs a state folder for its journals and the
	// server has none.
	ErrNoState = errors.New("no state folder")
	// ErrJournalBusy: another call of this server is running the journal.
	ErrJournalBusy = errors.New("journal in use by another call")
	// ErrPanic: a tool handler panicked; the call fails, the server keeps
	// serving.
	ErrPanic = errors.New("internal error")
	// ErrListenAddr: an HTTP address is not on loopback and remote
	// clients were not allowed, or does not parse.
	ErrListenAddr = errors.New("bad listen address")
)

// Defaults of the zero Config fields.
const (
	DefaultMaxK            = 100
	DefaultMaxSamples      = 1000
	DefaultMaxCandidates   = 1000
	DefaultMaxMessages     = 1000
	DefaultMaxSteps        = 100_000
	DefaultMaxRequestBytes = 4 << 20
	// JournalGrace is how long a run_task call waits for another call of
	// this server to release the same journal (a cancelled run winding
	// down) before it fails with ErrJournalBusy.
	JournalGrace = 5 * time.Second
)

// Config is what a Server serves with. The zero value serves the simulated
// model, with the file tools over the working folder under the read-only
// policy, and no run_task (State is empty).
type Config struct {
	// Models are the model specs a request may use ("sim", "openai:MODEL",
	// "ollama:MODEL", "anthropic:MODEL"); the first is the default.
	// Empty means ["sim"]. Its flag's help lists the {specs} a build
	// knows (models.Specs).
	Models []string `flag:"model" usage:"a model requests may use: {specs}; repeat for several, the first is the default"`
	// BaseURL is the server the openai: and ollama: models call.
	BaseURL string `flag:"base-url" usage:"server URL for openai: (any OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1) and ollama: models"`
	// AllowAnyModel lets a request name any model spec and any base URL.
	// The server then calls whatever URL a client names (never with the
	// API keys of its environment, which go only to BaseURL): for a
	// trusted client only. No tool result carries an API key the server
	// holds (the environment's, or a Models spec's ;key=VAR), even when
	// a model server echoes it in an error: it reads [REDACTED]. A spec
	// not in Models may not carry its own
	// endpoint (;base=, ;key=, ;rpm=, ;inflight=): those would send a key
	// of the server's environment to a server the client names.
	AllowAnyModel bool `flag:"allow-any-model" usage:"let requests name any model and base URL (the server then calls any URL a client names, without the environment's API keys)"`
	// Timeout bounds one model call; zero means models.DefaultTimeout.
	Timeout time.Duration `flag:"timeout" usage:"time limit of one model call, and of one call of --embedder or --judge"`
	// Sim is the simulated model's behaviour. A zero P means
	// sim.DefaultConfig().
	Sim sim.Config
	// Root is the folder of run_task's file tools and spec paths; nothing
	// leaves it. Empty means the working folder.
	Root string `flag:"root" usage:"folder of run_task's and solve_problem's spec paths and file tools; nothing leaves it"`
	// State is the folder of run_task's journals; it is created (0700)
	// at the first run_task if missing, never at New, and refused (by
	// New when it exists, else by that run_task) when another user owns
	// it or others may write in it (they could change a run's journal).
	// Empty disables
	// run_task (it fails with ErrNoState). New
	// logs a warning when it is Root or inside it and Policy lets a
	// side-effect tool run: a task could then change its journals.
	State string `flag:"state" usage:"folder of run_task's journals (created, 0700, at the first run_task if missing)"`
	// UnsignedJournals opts run_task's journals out of signing
	// (journal.Unsigned, the CLI's --journal-unsigned).
	UnsignedJournals bool `flag:"journal-unsigned" usage:"write (and resume) run_task's journals without signing them: a plain SHA-256 chain and no chain head kept (see docs/journal.md)"`
	// Policy says which tools a task may run; nil means
	// categories.DefaultPolicy(), the read-only categories.
	Policy *categories.Policy
	// MaxK, MaxSamples, MaxCandidates and MaxMessages bound a request:
	// the margin, the samples one race may draw (per step for run_task),
	// the replies of one vote and the messages of one prompt. Zero means
	// the Default value.
	MaxK                       int `flag:"max-k" usage:"largest margin k a request may ask for"`
	MaxSamples                 int `flag:"max-samples" usage:"most samples one race may draw (per step for run_task)"`
	MaxCandidates, MaxMessages int
	// MaxSteps bounds the steps of one run_task run, replayed ones
	// included, whatever its spec says; zero means DefaultMaxSteps.
	MaxSteps int
	// MaxRequestBytes bounds one message over stdio and one request body
	// over HTTP; zero means DefaultMaxRequestBytes.
	MaxRequestBytes int64 `flag:"max-request-bytes" usage:"largest request: one stdio message, one HTTP body, one spec file"`
	// Logger receives the server's logs; nil means none. Over stdio it
	// must not write to stdout, the transport.
	Logger *slog.Logger
	// Observer watches every run_task run (see maker/observe) and every
	// model call of sample_and_vote; a run continues the caller's trace
	// when the request carries one. Nil means none.
	Observer maker.Observer
	// Version is the version the server reports; empty means mdap's
	// module version as the build records it (buildinfo.Module: "(devel)"
	// for a build from a work tree, the dependency's version in a program
	// that imports mdap).
	Version string
	// ToolDeclaration is how run_task declares a spec's tools, and
	// sample_and_vote the request's, to the model
	// (maker.Solver.ToolDeclaration); the zero value chooses by model.
	ToolDeclaration maker.ToolDeclaration `flag:"tool-declaration" usage:"how run_task declares a spec's tools to the model: native, prompt, both, or auto (native for openai: and anthropic:, else prompt)"`
	// Embedder and Judge serve the "embedding" and "judge" fields of a
	// client's answer_schema (vote and sample_and_vote), which may name
	// no model of its own: the operator chooses what the server calls
	// (match.OpenEmbedder, match.OpenJudge). Nil refuses such fields
	// with ErrArgument. Each must be deterministic for a vote to be
	// reproducible (see match.Embedder); each call has Timeout, as a
	// model call has; a failing one fails the call (vote.ErrMatch),
	// never guessing a class.
	Embedder match.Embedder
	Judge    match.Judge
}

// matchers are the server's own embedder and judge for a client's
// answer_schema, each call bounded by Config.Timeout as a model call is.
func (s *Server) matchers() match.Options {
	var o match.Options
	if e := s.cfg.Embedder; e != nil {
		o.Embedder = timedEmbedder{e, s.cfg.Timeout}
	}
	if j := s.cfg.Judge; j != nil {
		o.Judge = match.JudgeFunc(func(ctx context.Context, answer string, candidates []string) (int, error) {
			ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
			defer cancel()
			return j.Same(ctx, answer, candidates)
		})
	}
	return o
}

// timedEmbedder bounds each call of an embedder by timeout.
type timedEmbedder struct {
	match.Embedder
	timeout time.Duration
}

func (e timedEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	return e.Embedder.EmbedDocuments(ctx, texts)
}

// Server is mdap's MCP server: the SDK's server with the five tools. It is
// safe for concurrent use: over HTTP many sessions call it at once.
type Server struct {
	cfg      Config
	log      *slog.Logger
	mcp      *mcp.Server
	exec     *executor.Executor
	root     *os.Root
	journals journalLocks
	keys     secrets.Set // heldKeys: never in what the server sends (redactingResults, redactingNotes)
}

// New returns a server for cfg. It makes no network call.
//
// Errors wrap ErrConfig: what Config.Validate refuses (a *maker.FieldError
// naming the field), or a State folder that cannot be made or is not
// private (safefile.ErrNotPrivate).
func New(cfg Config) (*Server, error) {
	if len(cfg.Models) == 0 {
		cfg.Models = []string{"sim"}
	}
	if cfg.Sim.P == 0 {
		cfg.Sim = sim.DefaultConfig()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Timeout = or(cfg.Timeout, models.DefaultTimeout)
	cfg.MaxK = or(cfg.MaxK, DefaultMaxK)
	cfg.MaxSamples = or(cfg.MaxSamples, DefaultMaxSamples)
	cfg.MaxCandidates = or(cfg.MaxCandidates, DefaultMaxCandidates)
	cfg.MaxMessages = or(cfg.MaxMessages, DefaultMaxMessages)
	cfg.MaxSteps = or(cfg.MaxSteps, DefaultMaxSteps)
	cfg.MaxRequestBytes = or(cfg.MaxRequestBytes, DefaultMaxRequestBytes)
	if cfg.Root == "" {
		cfg.Root = "."
	}
	if cfg.Version == "" {
		cfg.Version = buildinfo.Module("github.com/mdap-go/mdap")
	}
	s := &Server{cfg: cfg, log: cfg.Logger, journals: journalLocks{busy: map[string]chan struct{}{}}, keys: heldKeys(cfg.BaseURL, cfg.Models)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	tax := categories.Builtin()
	policy := categories.DefaultPolicy()
	if cfg.Policy != nil {
		policy = *cfg.Policy
	}
	s.cfg.Policy = &policy // Serve's log line says it
	ex, err := fstools.New(cfg.Root, executor.WithTaxonomy(tax), executor.WithPolicy(policy), executor.WithLogger(s.log))
	if err != nil {
		return nil, fmt.Errorf("%w: root: %w", ErrConfig, err)
	}
	s.exec = ex
	if s.root, err = os.OpenRoot(cfg.Root); err != nil {
		ex.Close()
		return nil, fmt.Errorf("%w: root: %w", ErrConfig, err)
	}
	if cfg.State != "" {
		// Whoever else may write in it could change a run's journal. A
		// missing folder is made at the first run_task (stateFolder),
		// not here: a server that never runs a task leaves no trace.
		if _, err := os.Lstat(cfg.State); err == nil || !errors.Is(err, fs.ErrNotExist) {
			if err := safefile.PrivateDir(cfg.State); err != nil {
				s.Close()
				return nil, fmt.Errorf("%w: state folder: %w", ErrConfig, err)
			}
		}
	}
	if cfg.State != "" && inside(cfg.State, cfg.Root) && policyWrites(tax, policy) {
		s.log.Warn("the state folder is inside the root and the tool policy lets tasks change files: a task could change its journals", "state", cfg.State, "root", cfg.Root)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "mdap", Title: "mdap: voting LLM microagents", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       s.log,
		Capabilities: &mcp.ServerCapabilities{},
	})
	s.mcp.AddReceivingMiddleware(onlyDeclared)
	if len(s.keys) > 0 {
		s.mcp.AddReceivingMiddleware(redactingResults(s.keys))
		s.mcp.AddSendingMiddleware(redactingNotes(s.keys))
	}
	s.addTools()
	return s, nil
}

const instructions = `mdap decides each step of a task by first-to-ahead-by-k voting over stateless LLM samples, with red flags that throw suspect replies away (the MAKER method).
- vote: tally replies you sampled yourself, in order; says who won or how many more samples are needed at the least.
- parse: one reply's red flag, or its canonical form and vote key.
- sample_and_vote: let the server sample a prompt through its model(s) until one answer leads by k.
- run_task: solve a spec task step by step, with a journal; resume a cancelled run with resume: true.
- kmin: the margin k a task of S steps needs for a target success rate, and its cost.`

// MCP returns the SDK server, to connect it to any transport (for
// example mcp.NewInMemoryTransports in a test).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close releases the root folder and the executor's hold on it. Calls in
// flight must have ended.
func (s *Server) Close() error { return errors.Join(s.exec.Close(), s.root.Close()) }

// inside reports whether dir is root or inside it.
func inside(dir, root string) bool {
	d, err1 := filepath.Abs(dir)
	r, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(r, d)
	return err == nil && filepath.IsLocal(rel) // "." (dir is root) is local too
}

// policyWrites reports whether p lets a side-effect tool of tax run.
func policyWrites(tax *categories.Taxonomy, p categories.Policy) bool {
	for _, e := range tax.Tools() {
		if !e.ReadOnly() && p.Allows(e) == nil {
			return true
		}
	}
	return false
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// addTool registers a typed tool whose panics become tool errors. Its
// input schema is inferred from In, with minimums on the counts (see
// withMinimums), so that an explicit k: 0 is refused, not taken as "the
// default"; its output schema from Out (its element type, for a pointer),
// as the SDK would; both in the portable form (see portable).
func addTool[In, Out any](s *Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	if t.InputSchema == nil {
		if sch, err := jsonschema.For[In](nil); err == nil {
			withMinimums(sch)
			portable(sch, true)
			t.InputSchema = sch
		}
	}
	if out := reflect.TypeFor[Out](); t.OutputSchema == nil && out != reflect.TypeFor[any]() {
		if out.Kind() == reflect.Pointer {
			out = out.Elem()
		}
		if sch, err := jsonschema.ForType(out, &jsonschema.ForOptions{}); err == nil {
			portable(sch, false)
			t.OutputSchema = sch
		}
	}
	mcp.AddTool(s.mcp, t, safe(s.log, t.Name, h))
}

// countMinimums are the least values of count fields whose zero would
// otherwise read as "left out, take the default" (k: 0 became 3). Other
// counts are checked by the tools, with their own messages.
var countMinimums = map[string]float64{"k": 1}

// withMinimums sets the minimums of the count properties of sch.
func withMinimums(sch *jsonschema.Schema) {
	for name, p := range sch.Properties {
		if m, ok := countMinimums[name]; ok && p != nil && (p.Type == "integer" || p.Type == "number") {
			p.Minimum = &m
		}
	}
}

// safe turns a panic of h into a tool error wrapping ErrPanic, logged
// with its stack.
func safe[In, Out any](log *slog.Logger, name string, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("tool panicked", "tool", name, "panic", p, "stack", string(debug.Stack()))
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("%w: the %s tool failed (%v); the server logged it and keeps serving", ErrPanic, name, p)
			}
		}()
		return h(ctx, req, in)
	}
}

// failure is a tool error that still carries the tool's structured
// output: a failed run's summary, a race's tally.
func failure(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// progress sends progress notifications for one call, if the client asked
// for them with a progress token. Safe for concurrent use; notifications
// go out in the order of their progress values.
type progress struct {
	mu    sync.Mutex
	ctx   context.Context
	req   *mcp.CallToolRequest
	token any
	n     float64
	log   *slog.Logger
}

func newProgress(ctx context.Context, req *mcp.CallToolRequest, log *slog.Logger) *progress {
	p := &progress{ctx: ctx, req: req, log: log}
	if req != nil && req.Params != nil {
		p.token = req.Params.GetProgressToken()
	}
	return p
}

// step reports one more unit of progress out of total (0: unknown).
func (p *progress) step(total float64, format string, a ...any) {
	if p.token == nil || p.req.Session == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if total > 0 && p.n > total {
		total = p.n // never past the total
	}
	err := p.req.Session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: p.token, Progress: p.n, Total: total, Message: fmt.Sprintf(format, a...),
	})
	if err != nil {
		p.log.Debug("progress notification failed", "err", err)
	}
}

// journalLocks hands each journal name to one call at a time.
type journalLocks struct {
	mu   sync.Mutex
	busy map[string]chan struct{}
}

// acquire takes name, waiting up to grace for a call that holds it (a
// cancelled run winding down), and returns its release.
func (j *journalLocks) acquire(ctx context.Context, name string, grace time.Duration) (func(), error) {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		j.mu.Lock()
		held, ok := j.busy[name]
		if !ok {
			ch := make(chan struct{})
			j.busy[name] = ch
			j.mu.Unlock()
			return func() {
				j.mu.Lock()
				delete(j.busy, name)
				j.mu.Unlock()
				close(ch)
			}, nil
		}
		j.mu.Unlock()
		select {
		case <-held:
		case <-timer.C:
			return nil, fmt.Errorf("%w: %s is being run by another call of this server; wait for it to end, or cancel it", ErrJournalBusy, name)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// joinQuoted lists names for a message: "a", "b".
func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
