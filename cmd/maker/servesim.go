package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"net"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// serveSimFlags are the flags of maker serve-sim beside the sim flags.
type serveSimFlags struct {
	obs         watchFlags
	addr        string
	allowRemote bool
	task        string
	specFile    string
	modelName   string
	verbose     bool
	faults      simserver.Faults
	billing     simserver.Billing // (cost.go)
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
			cfg, err := f.config(cmd, &simFl, scratch)
			if err != nil {
				return err
			}
			return f.serve(cmd, cfg)
		},
	}
	f.register(cmd.Flags(), &simFl, scratch)
	return cmd
}

func (f *serveSimFlags) register(fs *pflag.FlagSet, simFl *runFlags, scratch *cobra.Command) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8090", "listen address HOST:PORT; a loopback address unless --allow-remote (port 0: any free port)")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a non-loopback --addr: the server has no authentication")
	fs.StringVar(&f.task, "task", "hanoi", "the task whose step prompts are answered: hanoi, or spec (with --spec)")
	fs.StringVar(&f.specFile, "spec", "", "spec FILE: answer that spec task's prompts from its script (implies --task spec)")
	fs.StringVar(&f.modelName, "model-name", simserver.DefaultModelName, "the model listed at /v1/models (a request may name any model)")
	fs.BoolVar(&f.verbose, "verbose", false, "log every request on stderr")
	f.obs.register(fs, false)
	fs.Float64Var(&f.faults.RateLimit, "fault-429", 0, "fraction of requests answered 429 with a Retry-After header")
	fs.IntVar(&f.faults.RetryAfter, "retry-after", 1, fmt.Sprintf("the Retry-After of a 429, in seconds (0 to %d)", simserver.MaxRetryAfter))
	fs.Float64Var(&f.faults.ServerError, "fault-500", 0, "fraction of requests answered 500")
	fs.Float64Var(&f.faults.Hang, "fault-hang", 0, "fraction of requests that hang until the client gives up")
	fs.Float64Var(&f.faults.Truncate, "fault-truncate", 0, "fraction of requests whose reply is cut after the headers and half the JSON")
	fs.Float64Var(&f.faults.Garbage, "fault-garbage", 0, "fraction of requests answered 200 with a body that is not JSON")
	registerBilling(fs, &f.billing)
	simFl.register(scratch)
	for _, name := range simFlags {
		fs.AddFlag(scratch.Flags().Lookup(name))
	}
}

// serve serves the simulated model with cfg until the command is
// interrupted.
func (f *serveSimFlags) serve(cmd *cobra.Command, cfg simserver.Config) error {
	level := slog.LevelInfo
	if f.verbose {
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
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return failed(fmt.Errorf("--addr %s: %w", f.addr, err))
	}
	if err := f.obs.observer().ObserveCounter(observe.MetricSimRequests, "{request}", "Requests the simulated OpenAI-compatible server answered, by outcome.", "outcome", func() map[string]int64 {
		st := s.Stats()
		return map[string]int64{"reply": int64(st.Replies), "fault": int64(st.Faults()), "bad_request": int64(st.BadRequests), "provider_error": int64(st.ProviderErrors)}
	}); err != nil {
		return failed(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "listening on http://%s/v1\n", ln.Addr())
	log.Info("serving the simulated model", "task", f.task, "model", s.ModelName(),
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
var serveSimFlagOf = map[string]string{"Addr": "addr", "AllowRemote": "allow-remote",
	"RateLimit": "fault-429", "RetryAfter": "retry-after", "ServerError": "fault-500",
	"Hang": "fault-hang", "Truncate": "fault-truncate", "Garbage": "fault-garbage",
}

// config checks every flag and returns the server's configuration (without
// its logger). Errors are usage errors naming the flag and its range.
func (f *serveSimFlags) config(cmd *cobra.Command, simFl *runFlags, scratch *cobra.Command) (simserver.Config, error) {
	var cfg simserver.Config
	if err := fieldUsageErr(cmp.Or(simserver.CheckAddr(f.addr, f.allowRemote), f.faults.Validate()), serveSimFlagOf, "serve-sim"); err != nil {
		return cfg, err
	}
	if f.modelName == "" {
		return cfg, usageErr("--model-name \"\": give the name to list, such as sim")
	}
	if err := checkBilling(cmd.Flags(), f.billing); err != nil {
		return cfg, err
	}
	if err := simFl.validate(scratch); err != nil {
		return cfg, err
	}
	if f.specFile != "" && !cmd.Flags().Changed("task") {
		f.task = "spec"
	}
	switch {
	case f.task == "hanoi" && f.specFile != "":
		return cfg, usageErr("--spec applies to --task spec, not hanoi")
	case f.task == "hanoi":
		cfg.Oracle = hanoi.Oracle{}
	case f.task == "spec" && f.specFile == "":
		return cfg, usageErr("--task spec needs --spec FILE: the spec whose script answers the prompts")
	case f.task == "spec":
		s, err := spec.Load(f.specFile)
		if err != nil {
			return cfg, usageErr("--spec: %w", err)
		}
		if len(s.Script) == 0 {
			return cfg, usageErr("--spec %s: the spec has no \"script\", so the simulated model has no reply to give", f.specFile)
		}
		cfg.Oracle = spec.Oracle{Spec: s}
	default:
		return cfg, usageErr("--task %q: use hanoi, or spec with --spec FILE", f.task)
	}
	cfg.Sim, cfg.Faults, cfg.ModelName, cfg.Billing = simFl.simConfig(), f.faults, f.modelName, f.billing
	return cfg, nil
}
