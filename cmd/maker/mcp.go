package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"time"

	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/credentials"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// tokenEnv is the environment variable that holds the HTTP bearer token
// when --token is not given.
const tokenEnv = "MDAP_MCP_TOKEN"

// mcpFlags are maker mcp's flags: most set the server's mcpserver.Config
// directly, which checks itself (Config.Validate), the rest its
// mcpserver.HTTPConfig (stdio or HTTP, and the HTTP server's token).
type mcpFlags struct {
	cfg      mcpserver.Config
	http     mcpserver.HTTPConfig
	Embedder string `flag:"embedder" usage:"the embedder of an answer_schema's \"embedding\" fields (vote, sample_and_vote): ollama:MODEL (at $OLLAMA_HOST, else 127.0.0.1:11434) or openai:MODEL (with $OPENAI_API_KEY); a client's schema may name no model of its own; default: none, such fields are refused"`
	Judge    string `flag:"judge" usage:"the judge model of an answer_schema's \"judge\" field (vote, sample_and_vote), named as --embedder's; default: none, such fields are refused"`
	Tools    string `flag:"tools" usage:"tool categories and tools a task may run, comma-separated (e.g. read_only,file_write; -NAME denies; none); default: the read-only categories"`
	LogLevel string `flag:"log-level" usage:"log level on stderr: debug, info, warn or error"`
	latency  time.Duration
	level    slog.Level
	ln       *mcpserver.HTTPListener // --http's, opened by check
	flagOf   map[string]string       // the flag of each field of cfg and http
	obs      watchFlags
}

// mcpSimFlagOf names the flag of each sim.Config field maker mcp sets
// (the other fields' flags are their tags': flagbind).
var mcpSimFlagOf = map[string]string{"P": "p", "FlagRate": "flag-rate", "Latency": "latency"}

func newMCP() *cobra.Command {
	f := &mcpFlags{cfg: mcpserver.LocalConfig()}
	cmd := &cobra.Command{
		Use:     "mcp",
		Short:   "Serve mdap to coding agents and IDEs over the Model Context Protocol",
		Long:    help("mcp"),
		Example: example("mcp"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.check(cmd); err != nil {
				return err
			}
			return f.run(cmd)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func (f *mcpFlags) register(fs *pflag.FlagSet) {
	c, h := &f.cfg, &f.http
	f.flagOf = flagbind.Usage{"specs": models.Specs}.Bind(fs, c)
	maps.Copy(f.flagOf, flagbind.Bind(fs, h))
	maps.Copy(f.flagOf, mcpSimFlagOf)
	f.LogLevel = "info"
	flagbind.Bind(fs, f)
	f.obs.register(fs, false)
	fs.Uint64Var(&c.Sim.Seed, "seed", 1, "simulated model: seed of every random draw")
	fs.Float64Var(&c.Sim.P, "p", c.Sim.P, "simulated model: probability that a valid reply is right")
	fs.Float64Var(&c.Sim.FlagRate, "flag-rate", c.Sim.FlagRate, "simulated model: probability of a red-flag reply")
	fs.DurationVar(&f.latency, "latency", 0, "simulated model: latency of a call")
}

// check refuses flags that do not go together, then what the server's
// Config and HTTPConfig refuse, said in flags, and listens on --http:
// nothing is started on a refusal.
func (f *mcpFlags) check(cmd *cobra.Command) error {
	fs, c := cmd.Flags(), &f.cfg
	switch {
	case fs.Changed("token") && f.http.Token == "":
		return usageErr("--token \"\": give the token clients must send, or leave the flag out")
	case !fs.Changed("token") && f.http.Addr != "":
		f.http.Token = os.Getenv(tokenEnv) // over stdio, no token is used
	}
	switch {
	case c.State == "":
		return usageErr("--state \"\": give the folder of run_task's journals")
	case f.http.Addr == "" && f.obs.addr != "":
		return usageErr("--metrics-addr needs --http: over stdio the server lives only as long as its client")
	}
	// 0 is the library's default: refused here, as --p 0 (Config.Validate checks the rest)
	if err := positiveFlags(fs, "timeout", "max-k", "max-samples", "max-request-bytes", "p"); err != nil {
		return err
	}
	c.Sim.Latency = sim.LatencyOf(f.latency, 0)
	// a ;key=VAR's value, a password in --base-url or ;base=; before the
	// specs are checked, as a refusal quotes its spec
	f.obs.redact(cmd.Context(), credentials.Of(models.Options{BaseURL: c.BaseURL}, c.Models...)...)
	if err := fieldUsageErr(c.Validate(), f.flagOf, "mcp"); err != nil {
		return err
	}
	policy, err := parseTools(f.Tools)
	if err != nil {
		return err
	}
	c.Policy = &policy
	if f.Embedder != "" {
		if c.Embedder, err = match.OpenEmbedder(f.Embedder, ""); err != nil {
			return usageErr("--embedder: %w", err)
		}
	}
	if f.Judge != "" {
		if c.Judge, err = match.OpenJudge(f.Judge, ""); err != nil {
			return usageErr("--judge: %w", err)
		}
	}
	if f.level, err = parseLogLevel(f.LogLevel); err != nil {
		return err
	}
	f.ln, err = f.http.Listen()
	switch {
	case fielderr.As(err) != nil && !fs.Changed("token") && f.http.Token != "": // $MDAP_MCP_TOKEN's, read with --http
		return fieldUsageErr(err, map[string]string{"NoAuth": "no-auth", "Token": "token (here $" + tokenEnv + ")"}, "mcp")
	case fielderr.As(err) != nil:
		return fieldUsageErr(err, f.flagOf, "mcp")
	case errors.Is(err, mcpserver.ErrListenAddr):
		return usageErr("--http: %w", err)
	case errors.Is(err, mcpserver.ErrListen):
		return usageErr("--http %s: %w", f.http.Addr, err)
	case err != nil: // no token could be made: not the user's doing
		return failed(err)
	}
	return nil
}

// run serves until the client leaves (stdio) or the command is
// interrupted (HTTP).
func (f *mcpFlags) run(cmd *cobra.Command) error {
	ctx := cmd.Context()
	if f.ln != nil {
		defer f.ln.Close()
		f.obs.redact(ctx, f.ln.Options.Token)
	}
	if err := f.obs.start(ctx, "maker-mcp", cmd.ErrOrStderr()); err != nil {
		return err
	}
	defer f.obs.stop(ctx)
	f.cfg.Logger = f.obs.logger(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: f.level})
	f.cfg.Observer = f.obs.solverObserver()
	srv, err := mcpserver.New(f.cfg)
	if err != nil {
		return usageErr("%w", err)
	}
	defer srv.Close()
	if ln := f.ln; ln != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "maker mcp: serving MCP over streamable HTTP at http://%s%s\n", ln.Addr(), mcpserver.Path)
		if token := ln.Options.Token; ln.Generated {
			// Once, on stderr, past the redaction of everything else (the
			// token is a held secret from here on): the operator copies it
			// into the client's configuration.
			notice(cmd, unredacted(cmd.ErrOrStderr()),
				fmt.Sprintf("maker mcp: no $%s was set, so this run generated a token; clients must send\n  Authorization: Bearer %s\n(set $%s or --token to choose it, or --no-auth to serve without one)\n", tokenEnv, token, tokenEnv),
				"maker mcp: no $"+tokenEnv+" was set, so this run generated a token; clients must send Authorization: Bearer TOKEN (set $"+tokenEnv+" or --token to choose it, or --no-auth to serve without one)",
				"token", token)
		}
	}
	switch err := srv.Serve(ctx, f.ln, cmd.InOrStdin(), cmd.OutOrStdout()); {
	case ctx.Err() != nil:
		return interrupted("")
	case err != nil:
		return failed(err)
	}
	return nil
}

// unredacted is the writer under w's redaction (observe.RedactWriter),
// for the one line that must show a secret: a generated token.
func unredacted(w io.Writer) io.Writer {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return u.Unwrap()
	}
	return w
}
