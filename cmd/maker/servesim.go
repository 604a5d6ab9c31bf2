package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"net"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// serveSimFlags are the flags of maker serve-sim beside the sim flags:
// the faults, model name and billing (cost.go) set the server's Config.
type serveSimFlags struct {
	obs         watchFlags
	Addr        string `flag:"addr" usage:"listen address HOST:PORT; a loopback address unless --allow-remote (port 0: any free port)"`
	AllowRemote bool   `flag:"allow-remote" usage:"allow a non-loopback --addr: the server has no authentication"`
	Task        string `flag:"task" usage:"the task whose step prompts are answered: hanoi, or spec (with --spec)"`
	SpecFile    string `flag:"spec" usage:"spec FILE: answer that spec task's prompts from its script (implies --task spec)"`
	Verbose     bool   `flag:"verbose" usage:"log every request on stderr"`
	cfg         simserver.Config
}

func newServeSim() *cobra.Command {
	var (
		f serveSimFlags
		// simFl holds the simulated model's flags. They are registered by
		// runFlags.register on a scratch command and shared with this one,
		// so that serve-sim has exactly maker hanoi's sim flags: the same
		// names, defaults, help and validation (runFlags.validate, which
		// with the default --model sim checks nothing else that the
		// scratch command could have changed).
		simFl   runFlags
		scratch = &cobra.Command{}
	)
	cmd := &cobra.Command{
		Use:     "serve-sim",
		Short:   "Serve the simulated model as an OpenAI-compatible endpoint, with faults",
		Long:    help("serve-sim"),
		Example: example("serve-sim"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.config(cmd, &simFl, scratch); err != nil {
				return err
			}
			return f.serve(cmd, f.cfg)
		},
	}
	f.register(cmd.Flags(), &simFl, scratch)
	return cmd
}

func (f *serveSimFlags) register(fs *pflag.FlagSet, simFl *runFlags, scratch *cobra.Command) {
	f.Addr, f.Task = "127.0.0.1:8090", "hanoi"
	flagbind.Bind(fs, f)
	f.obs.register(fs, false)
	f.cfg.ModelName, f.cfg.Faults.RetryAfter, f.cfg.Billing = simserver.DefaultModelName, 1, simserver.DefaultBilling()
	flagbind.Bind(fs, &f.cfg)
	simFl.register(scratch)
	for _, name := range simFlags {
		fs.AddFlag(scratch.Flags().Lookup(name))
	}
}

// serve serves the simulated model with cfg until the command is
// interrupted.
func (f *serveSimFlags) serve(cmd *cobra.Command, cfg simserver.Config) error {
	level := slog.LevelInfo
	if f.Verbose {
		level = slog.LevelDebug
	}
	if err := f.obs.start(cmd.Context(), "maker-serve-sim", cmd.ErrOrStderr()); err != nil {
		return err
	}
	defer f.obs.stop(cmd.Context())
	log := f.obs.logger(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level})
	cfg.Logger = log
	s, err := simserver.New(cfg)
	if err != nil { // unreachable: config checked every field
		return usageErr("%w", err)
	}
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		return failed(fmt.Errorf("--addr %s: %w", f.Addr, err))
	}
	if err := f.obs.observer().ObserveCounter(observe.MetricSimRequests, "{request}", "Requests the simulated OpenAI-compatible server answered, by outcome.", "outcome", func() map[string]int64 {
		st := s.Stats()
		return map[string]int64{"reply": int64(st.Replies), "fault": int64(st.Faults()), "bad_request": int64(st.BadRequests), "provider_error": int64(st.ProviderErrors)}
	}); err != nil {
		return failed(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "listening on http://%s/v1\n", ln.Addr())
	log.Info("serving the simulated model", "task", f.Task, "model", s.ModelName(),
		"sim", s.Identity(), "latency", cfg.Sim.Latency.String(), "faults", cfg.Faults.String())
	err = s.Serve(cmd.Context(), ln)
	st := s.Stats()
	log.Info("stopped", "requests", st.Requests, "replies", st.Replies, "faults", st.Faults(),
		"bad_requests", st.BadRequests, "provider_errors", st.ProviderErrors)
	if err != nil {
		return failed(err)
	}
	return nil
}

// serveSimFlagOf names the flag of each field of simserver.CheckAddr and
// simserver.Faults.
var serveSimFlagOf = flagbind.Names(map[string]string{"Addr": "addr", "AllowRemote": "allow-remote"}, simserver.Faults{})

// config checks every flag and completes the server's configuration
// (without its logger): the simulated model and the task's oracle.
// Errors are usage errors naming the flag and its range.
func (f *serveSimFlags) config(cmd *cobra.Command, simFl *runFlags, scratch *cobra.Command) error {
	cfg := &f.cfg
	if err := fieldUsageErr(cmp.Or(simserver.CheckAddr(f.Addr, f.AllowRemote), cfg.Faults.Validate()), serveSimFlagOf, "serve-sim"); err != nil {
		return err
	}
	if cfg.ModelName == "" {
		return usageErr("--model-name \"\": give the name to list, such as sim")
	}
	if err := checkBilling(cmd.Flags(), cfg.Billing); err != nil {
		return err
	}
	if err := simFl.validate(scratch); err != nil {
		return err
	}
	if f.SpecFile != "" && !cmd.Flags().Changed("task") {
		f.Task = "spec"
	}
	switch {
	case f.Task == "hanoi" && f.SpecFile != "":
		return usageErr("--spec applies to --task spec, not hanoi")
	case f.Task == "hanoi":
		cfg.Oracle = hanoi.Oracle{}
	case f.Task == "spec" && f.SpecFile == "":
		return usageErr("--task spec needs --spec FILE: the spec whose script answers the prompts")
	case f.Task == "spec":
		s, err := spec.Load(f.SpecFile)
		if err != nil {
			return usageErr("--spec: %w", err)
		}
		if len(s.Script) == 0 {
			return usageErr("--spec %s: the spec has no \"script\", so the simulated model has no reply to give", f.SpecFile)
		}
		cfg.Oracle = spec.Oracle{Spec: s}
	default:
		return usageErr("--task %q: use hanoi, or spec with --spec FILE", f.Task)
	}
	cfg.Sim = simFl.SimConfig()
	return nil
}
