package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/cobra"
)

// tokenEnv is the environment variable that holds the HTTP bearer token
// when --token is not given.
const tokenEnv = "MDAP_MCP_TOKEN"

func newMCP() *cobra.Command {
	var (
		httpAddr, token, baseURL, root, state, tools, logLevel, declaration string
		allowRemote, allowAnyModel, noAuth                                  bool
		modelSpecs, origins                                                 []string
		timeout, latency                                                    time.Duration
		maxK, maxSamples                                                    int
		maxRequestBytes                                                     int64
		seed                                                                uint64
		p, flagRate                                                         float64
		obs                                                                 watchFlags
	)
	def := sim.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve mdap to coding agents and IDEs over the Model Context Protocol",
		Long: `mcp serves mdap as an MCP server: over stdio by default (the client starts
maker mcp and speaks JSON-RPC on its stdin and stdout), or over streamable HTTP
with --http. Its tools: vote (tally replies you sampled, first-to-ahead-by-k),
parse (one reply's red flag, or canonical form and key), sample_and_vote
(sample a prompt through the server's models until one answer leads by k),
run_task (solve a spec task with a journal under --state; resumable) and kmin
(the scaling laws).

A request may use only the --model models (unless --allow-any-model), its
spec paths and file tools stay inside --root, its tools run under the --tools
policy (read-only by default), and the HTTP server listens on loopback only
unless --allow-remote. Logs go to stderr; over stdio, stdout carries nothing but
the protocol. Over HTTP every request needs a bearer token, even on loopback
(any user of the machine can reach a loopback port): --token or $MDAP_MCP_TOKEN,
or else one generated at start and printed once on stderr; --no-auth serves
without one. The simulated model (sim) answers run_task from the spec's script
and sample_and_vote for Towers of Hanoi step prompts only.`,
		Example: `  maker mcp --root . --state ~/.local/state/mdap/journals
  maker mcp --model openai:gpt-4.1-mini --tools read_only
  maker mcp --model openai:qwen3 --base-url http://127.0.0.1:11434/v1
  MDAP_MCP_TOKEN=secret maker mcp --http 127.0.0.1:8765
  maker mcp --http 127.0.0.1:8765     # prints a generated token on stderr`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			if !fs.Changed("token") {
				token = os.Getenv(tokenEnv)
			}
			switch {
			case httpAddr == "" && fs.Changed("token"):
				return usageErr("--token applies to --http only: over stdio the client that starts the server is trusted")
			case httpAddr == "" && allowRemote:
				return usageErr("--allow-remote applies to --http only")
			case httpAddr == "" && noAuth:
				return usageErr("--no-auth applies to --http only")
			case noAuth && token != "":
				return usageErr("--no-auth and a token (--token or $%s) contradict each other: drop one", tokenEnv)
			case fs.Changed("token") && token == "":
				return usageErr("--token \"\": give the token clients must send, or leave the flag out")
			case len(modelSpecs) == 0:
				return usageErr("--model: give at least one model")
			case !validDeclaration(declaration):
				return usageErr("--tool-declaration %q: use auto, native, prompt or both", declaration)
			case timeout <= 0:
				return usageErr("--timeout %s: must be a positive duration such as 30s or 2m", timeout)
			case maxK < 1 || maxK > maxK0:
				return usageErr("--max-k %d: use 1 to %d", maxK, maxK0)
			case maxSamples < 1 || maxSamples > maxSamplesFlag:
				return usageErr("--max-samples %d: use 1 to %d", maxSamples, maxSamplesFlag)
			case maxSamples < maxK:
				return usageErr("--max-samples %d: must be at least --max-k (%d), or a race at that k could never be decided", maxSamples, maxK)
			case maxRequestBytes < 1<<10 || maxRequestBytes > 1<<30:
				return usageErr("--max-request-bytes %d: use 1024 to %d", maxRequestBytes, 1<<30)
			case state == "":
				return usageErr("--state \"\": give the folder of run_task's journals")
			}
			simCfg := def
			simCfg.Seed, simCfg.P, simCfg.FlagRate = seed, p, flagRate
			if latency != 0 {
				simCfg.Latency = sim.FixedLatency(latency)
			}
			if err := simUsageErr(simCfg.Validate()); err != nil {
				return err
			}
			// a ;key=VAR's value, a password in --base-url or ;base=; before
			// the specs are checked, as a refusal quotes its spec
			obs.redact(cmd.Context(), models.Credentials(models.Options{BaseURL: baseURL}, modelSpecs...)...)
			for _, m := range modelSpecs {
				if err := models.CheckSpec(m); err != nil {
					return usageErr("--model %q: %w", m, err)
				}
			}
			if baseURL != "" {
				if err := checkBaseURL(baseURL); err != nil {
					return err
				}
			}
			level, err := parseLogLevel(logLevel)
			if err != nil {
				return err
			}
			policy, err := categories.Builtin().ParseSelection(tools)
			if err != nil {
				return usageErr("--tools: %w", err)
			}
			var addr string
			if httpAddr != "" {
				if addr, err = mcpserver.ListenAddr(httpAddr, allowRemote); err != nil {
					return usageErr("--http: %w", err)
				}
			}
			if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
				return usageErr("--root %q: not a folder", root)
			}
			stderr := cmd.ErrOrStderr()
			if obs.addr != "" && addr == "" {
				return usageErr("--metrics-addr needs --http: over stdio the server lives only as long as its client")
			}
			if err := obs.start(cmd.Context(), "maker-mcp", cmd.ErrOrStderr()); err != nil {
				return err
			}
			defer obs.stop(cmd.Context())
			generated := false
			if addr != "" && token == "" && !noAuth {
				if token, err = newToken(); err != nil {
					return failed(err)
				}
				generated = true
			}
			obs.redact(cmd.Context(), token)
			log := obs.logger(stderr, &slog.HandlerOptions{Level: level})
			srv, err := mcpserver.New(mcpserver.Config{
				Models: modelSpecs, BaseURL: baseURL, AllowAnyModel: allowAnyModel, Timeout: timeout,
				Sim: simCfg, Root: root, State: state, Policy: &policy,
				MaxK: maxK, MaxSamples: maxSamples, MaxRequestBytes: maxRequestBytes, Logger: log,
				ToolDeclaration: maker.ToolDeclaration(declaration),
				Observer:        obs.solverObserver(),
			})
			if err != nil {
				return usageErr("%w", err)
			}
			defer srv.Close()
			ctx := cmd.Context()
			if addr == "" {
				log.Info("serving MCP over stdio", "models", strings.Join(modelSpecs, ","), "root", root, "state", state, "tools", policy.String())
				in := cmd.InOrStdin()
				rc, ok := in.(io.ReadCloser)
				if !ok {
					rc = io.NopCloser(in)
				}
				err = srv.ServeIO(ctx, rc, nopWriteCloser{cmd.OutOrStdout()})
			} else {
				ln, lerr := net.Listen("tcp", addr)
				if lerr != nil {
					return usageErr("--http %s: %w", httpAddr, lerr)
				}
				if noAuth {
					reach := "every user and process of this machine"
					if allowRemote {
						reach = "anyone who can reach the address"
					}
					log.Warn("--no-auth: " + reach + " can use this server, and run_task and sample_and_vote spend its model keys")
				}
				fmt.Fprintf(cmd.OutOrStdout(), "maker mcp: serving MCP over streamable HTTP at http://%s%s\n", ln.Addr(), mcpserver.Path)
				if generated {
					// Once, on stderr, past the redaction of everything else
					// (the token is a held secret from here on): the operator
					// copies it into the client's configuration.
					fmt.Fprintf(unredacted(stderr), "maker mcp: no $%s was set, so this run generated a token; clients must send\n  Authorization: Bearer %s\n(set $%s or --token to choose it, or --no-auth to serve without one)\n", tokenEnv, token, tokenEnv)
				}
				log.Info("serving MCP over streamable HTTP", "addr", ln.Addr().String(), "auth", authMode(noAuth, generated), "models", strings.Join(modelSpecs, ","), "root", root, "state", state, "tools", policy.String())
				err = srv.ServeHTTPOn(ctx, ln, mcpserver.HTTPOptions{Token: token, NoAuth: noAuth, AllowedOrigins: origins})
			}
			switch {
			case ctx.Err() != nil:
				return interrupted("")
			case err != nil:
				return failed(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&httpAddr, "http", "", "serve streamable HTTP at ADDR (HOST:PORT or :PORT; :0 picks a free port, printed on stdout) instead of stdio")
	f.BoolVar(&allowRemote, "allow-remote", false, "with --http, listen on a non-loopback address (an empty host then means every interface); the bearer token is then all that guards the server")
	f.StringArrayVar(&origins, "allow-origin", nil, "with --http, a browser Origin (scheme://host[:port]) allowed besides the server's own and loopback ones; repeat for several")
	f.StringVar(&token, "token", "", "with --http, the bearer token every request must carry (default $"+tokenEnv+"; without either, one is generated and printed on stderr)")
	f.BoolVar(&noAuth, "no-auth", false, "with --http, serve without a token: every user of this machine (with --allow-remote, anyone who reaches it) can use the server and its model keys")
	f.StringArrayVar(&modelSpecs, "model", []string{"sim"}, "a model requests may use: "+models.Specs+"; repeat for several, the first is the default")
	f.StringVar(&baseURL, "base-url", "", "server URL for openai: (any OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1) and ollama: models")
	f.BoolVar(&allowAnyModel, "allow-any-model", false, "let requests name any model and base URL (the server then calls any URL a client names, without the environment's API keys)")
	f.DurationVar(&timeout, "timeout", models.DefaultTimeout, "time limit of one model call")
	f.StringVar(&root, "root", ".", "folder of run_task's spec paths and file tools; nothing leaves it")
	f.StringVar(&state, "state", defaultStateDir(), "folder of run_task's journals (created if missing)")
	f.StringVar(&declaration, "tool-declaration", "auto", "how run_task declares a spec's tools to the model: native, prompt, both, or auto (native for openai: and anthropic:, else prompt)")
	f.StringVar(&tools, "tools", "", "tool categories and tools a task may run, comma-separated (e.g. read_only,file_write; -NAME denies; none); default: the read-only categories")
	f.IntVar(&maxK, "max-k", mcpserver.DefaultMaxK, "largest margin k a request may ask for")
	f.IntVar(&maxSamples, "max-samples", mcpserver.DefaultMaxSamples, "most samples one race may draw (per step for run_task)")
	f.Int64Var(&maxRequestBytes, "max-request-bytes", mcpserver.DefaultMaxRequestBytes, "largest request: one stdio message, one HTTP body, one spec file")
	f.StringVar(&logLevel, "log-level", "info", "log level on stderr: debug, info, warn or error")
	obs.register(f, false)
	f.Uint64Var(&seed, "seed", 1, "simulated model: seed of every random draw")
	f.Float64Var(&p, "p", def.P, "simulated model: probability that a valid reply is right")
	f.Float64Var(&flagRate, "flag-rate", def.FlagRate, "simulated model: probability of a red-flag reply")
	f.DurationVar(&latency, "latency", 0, "simulated model: latency of a call")
	return cmd
}

// maxK0 bounds --max-k, as maxK bounds --k.
const maxK0 = maxK

// defaultStateDir is $XDG_STATE_HOME/mdap/journals, or
// ~/.local/state/mdap/journals, or a folder in the temporary folder when
// there is no home.
func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "mdap", "journals")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "mdap", "journals")
	}
	return filepath.Join(os.TempDir(), "mdap-journals")
}

// newToken returns a bearer token of 256 random bits, for an HTTP server
// started without one.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating the HTTP token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// authMode says how the HTTP server authenticates, for its log line (an
// attribute named "token" would be redacted whatever its value).
func authMode(noAuth, generated bool) string {
	switch {
	case noAuth:
		return "none (--no-auth)"
	case generated:
		return "bearer token (generated, printed above)"
	}
	return "bearer token"
}

// unredacted is the writer under w's redaction (observe.RedactWriter),
// for the one line that must show a secret: a generated token.
func unredacted(w io.Writer) io.Writer {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return u.Unwrap()
	}
	return w
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// validDeclaration reports whether s is a --tool-declaration choice.
func validDeclaration(s string) bool {
	_, err := maker.ParseToolDeclaration(s)
	return err == nil
}
